"""Concurrent bindings never over-admit (SPEC 4), also while the cache catches up mid-burst."""

import asyncio

from tests.support import binding, node, pod
from limitguard.state.store import ClusterState
from limitguard.core.config import Config, LimitAwareConfig

PODS = 500
ROOM = 10  # node "target": 10 cpu allocatable at 100%, every pod has a 1 cpu limit


def racing_state() -> ClusterState:
    state = ClusterState()
    state.replace_nodes([node("target", cpu="10")])
    state.replace_namespaces([])
    state.replace_pods([pod(f"p{index}", cpu="1", phase="Pending") for index in range(PODS)])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 100}))


async def burst(server, on_allowed=None, answered=None) -> list[str]:
    async def bind(index: int) -> str | None:
        status, answer = await server.post("/validate", binding(f"p{index}", "target", uid=f"u{index}"))
        assert status == 200
        if answered is not None:
            answered()
        if answer["response"]["allowed"]:
            if on_allowed is not None:
                on_allowed(index)
            return f"p{index}"
        assert "cpu limit 1 exceeds remaining 0" in answer["response"]["status"]["message"]
        return None

    results = await asyncio.gather(*(bind(index) for index in range(PODS)))
    return [name for name in results if name]


async def test_500_concurrent_bindings_with_room_for_10_admit_exactly_10(start_server):
    state = racing_state()
    server = await start_server(state, CONFIG)
    allowed = await burst(server)
    assert len(allowed) == ROOM
    assert state.allocated("target") == {"cpu": 10_000}


async def test_cache_update_arriving_mid_burst_keeps_the_count_exact(start_server):
    """The watch shows approved pods bound while bindings still arrive: ledger entries turn into
    committed sums (never both, never neither), so the node still takes exactly 10."""
    state = racing_state()
    server = await start_server(state, CONFIG)
    seen_bound: list[int] = []
    answered_after_first_update = 0

    def answered() -> None:
        nonlocal answered_after_first_update
        answered_after_first_update += bool(seen_bound)

    def cache_catches_up(index: int) -> None:
        # What the watch would deliver a moment later: the pod, now bound to the node.
        asyncio.get_running_loop().call_soon(
            lambda: (state.upsert_pod(pod(f"p{index}", node_name="target", cpu="1")), seen_bound.append(index))
        )

    allowed = await burst(server, on_allowed=cache_catches_up, answered=answered)
    await asyncio.sleep(0)
    assert answered_after_first_update > 100  # the update really landed in the middle of the burst
    assert len(allowed) == ROOM
    assert len(seen_bound) == ROOM
    assert len(state.ledger) == 0
    assert state.committed("target") == {"cpu": 10_000}
    assert state.allocated("target") == {"cpu": 10_000}
