"""Concurrent bindings never over-admit (SPEC 4), also while the cache catches up mid-burst."""

import asyncio

from limitguard.core.config import Config, LimitAwareConfig
from limitguard.state.store import ClusterState
from tests.support import LEDGER_NEVER_EXPIRES, binding, node, pod

PODS = 500
ROOM = 10  # node "target": 10 cpu allocatable at 100%, every pod has a 1 cpu limit


def racing_state() -> ClusterState:
    state = ClusterState(ledger_ttl_seconds=LEDGER_NEVER_EXPIRES)
    state.replace_nodes([node("target", cpu="10")])
    state.replace_namespaces([])
    state.replace_pods([pod(f"p{index}", cpu="1", phase="Pending") for index in range(PODS)])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 100}))


async def burst(server, indices: range, on_answer=None, on_allowed=None) -> list[str]:
    """Bind the pods *indices* concurrently; the names admitted. Every refusal names the full node."""

    async def bind(index: int) -> str | None:
        status, answer = await server.post("/validate", binding(f"p{index}", "target", uid=f"u{index}"))
        assert status == 200
        if on_answer is not None:
            on_answer()
        if answer["response"]["allowed"]:
            if on_allowed is not None:
                on_allowed(index)
            return f"p{index}"
        assert "cpu limit 1 exceeds remaining 0" in answer["response"]["status"]["message"]
        return None

    results = await asyncio.gather(*(bind(index) for index in indices))
    return [name for name in results if name]


def bound(name: str) -> dict:
    """What the watch delivers once an approved binding happened: the pod, bound to the node."""
    return pod(name, node_name="target", cpu="1")


async def test_500_concurrent_bindings_with_room_for_10_admit_exactly_10(start_server):
    state = racing_state()
    server = await start_server(state, CONFIG)
    allowed = await burst(server, range(PODS))
    assert len(allowed) == ROOM
    assert state.allocated("target") == {"cpu": 10_000}


async def test_cache_update_arriving_mid_burst_keeps_the_count_exact(start_server):
    """The watch shows approved pods bound while bindings still arrive: ledger entries turn into
    committed sums (never both, never neither), so the node still takes exactly 10.

    The feed is held deterministically: six bindings are admitted, the watch delivers three of
    them and stops, and the remaining 494 bindings are answered while the cache sits between
    states (3 committed, 3 in the ledger). The held events are released by the first answer of
    that burst, and every later approval is delivered while the burst goes on."""
    state = racing_state()
    server = await start_server(state, CONFIG)

    first = await burst(server, range(6))
    assert len(first) == 6 and len(state.ledger) == 6
    for name in first[:3]:  # the watch delivers half, then is held
        state.upsert_pod(bound(name))
    assert state.committed("target") == {"cpu": 3000} and len(state.ledger) == 3
    assert state.allocated("target") == {"cpu": 6000}

    loop = asyncio.get_running_loop()
    seen: list[tuple[int, int]] = []  # (committed cpu, allocated cpu) as each answer arrived
    delivered: list[str] = []

    def on_answer() -> None:
        seen.append((state.committed("target").get("cpu", 0), state.allocated("target")["cpu"]))
        if len(seen) == 1:  # release the held events now, while the burst is in flight
            loop.call_soon(
                lambda: [(state.upsert_pod(bound(name)), delivered.append(name)) for name in first[3:]]
            )

    def on_allowed(index: int) -> None:
        loop.call_soon(lambda: (state.upsert_pod(bound(f"p{index}")), delivered.append(f"p{index}")))

    second = await burst(server, range(6, PODS), on_answer=on_answer, on_allowed=on_allowed)
    await asyncio.sleep(0)  # let the last scheduled delivery run

    assert seen[0][0] == 3000  # the first answer came while the cache sat between its states
    assert all(allocated <= 10_000 for _, allocated in seen)  # never counted twice
    assert len(second) == ROOM - 6  # never counted neither: exactly the room left
    assert sorted(delivered) == sorted(first[3:] + second)
    assert len(state.ledger) == 0
    assert state.committed("target") == {"cpu": 10_000}
    assert state.allocated("target") == {"cpu": 10_000}
