"""Failover between replicas: a killed leader, a leader cut off from the apiserver, an unreachable one.

The election clock is the test's (ManualClock): leadership changes happen exactly when the test
advances it, and the assertions are about order (who led when) and outcomes (what was admitted).
"""

from __future__ import annotations

import asyncio

import pytest

from tests.integration.kube.helpers import eventually
from tests.integration.kube.replicaset import HANG_GUARD, LEASE, NAMESPACE, Member, ReplicaSet, cluster

RETRY, RENEW_DEADLINE, LEASE_DURATION = 2.0, 10.0, 15  # client-go's defaults, the config's defaults


async def bind_all(replicas: ReplicaSet, pods: list[str], members: list[Member]) -> list[dict]:
    return await asyncio.gather(
        *(replicas.bind(members[index % len(members)], pod) for index, pod in enumerate(pods))
    )


def pending(replicas: ReplicaSet, total: int) -> list[str]:
    return [f"p-{index:03d}" for index in range(total) if f"p-{index:03d}" not in replicas.admitted]


async def advance_until(replicas: ReplicaSet, condition, what: str, limit: float = 60.0) -> list[tuple]:
    """Advance the election clock one retry period at a time; returns who led after each step."""
    history = []
    while not condition():
        assert replicas.clock.time < 1000.0 + 10_000, "runaway clock"
        limit -= RETRY
        assert limit >= 0, f"never happened: {what}"
        await replicas.clock.advance(RETRY)
        history.append((replicas.clock.time, [m.name for m in replicas.leaders()]))
    return history


async def test_leader_killed_mid_burst_new_leader_catches_up_and_the_total_stays_exact(
    replicas: ReplicaSet,
) -> None:
    cluster(replicas.apiserver, "16", 60)  # room 20
    await replicas.start(3, policy="Deny")
    old = await replicas.elected()
    last_renewal = old.elector._renewed_at
    survivors = [member for member in replicas.members if member is not old]

    burst = asyncio.gather(*(replicas.bind(replicas.members[i % 3], f"p-{i:03d}") for i in range(15)))
    await eventually(lambda: len(replicas.admitted) >= 5, "part of the burst admitted", HANG_GUARD)
    await replicas.kill(old)  # whatever is still in flight to it is lost or answered
    await burst
    # The rest of the burst arrives while no leader is reachable: Deny until one takes over.
    during = await bind_all(replicas, [f"p-{i:03d}" for i in range(15, 30)], survivors)
    assert not any(answer["allowed"] for answer in during)
    # unreachable, or (connections kept alive while it shuts down) no longer the leader
    assert all("did not decide" in answer["status"]["message"] for answer in during), during
    assert 5 <= len(replicas.admitted) <= 15

    await replicas.all_seen()
    history = await advance_until(replicas, lambda: len(replicas.leaders()) == 1, "a new leader")
    new = await replicas.elected()  # the clock stands still while its watch catches up
    assert new in survivors
    acquired_at = next(at for event, at in new.elector.events if event == "acquired")
    # Nobody took over before the old lease, renewed last at last_renewal, ran out.
    assert acquired_at >= last_renewal + LEASE_DURATION
    assert all(len(leaders) <= 1 for _, leaders in history)
    assert new.counter("limitguard_leader_catch_ups_total", how="watch") == 1
    assert new.counter("limitguard_leader_transitions_total", direction="acquired") == 1
    lease = replicas.apiserver.lease(NAMESPACE, LEASE)
    assert lease is not None and lease["spec"]["holderIdentity"] == new.name
    assert lease["spec"]["leaseTransitions"] == 1

    # The scheduler retries what was refused or lost: the new leader knows what the old one admitted.
    await bind_all(replicas, pending(replicas, 60), survivors)
    assert len(replicas.admitted) == 20


async def test_leader_cut_off_from_the_apiserver_steps_down_before_a_new_one_takes_over(
    replicas: ReplicaSet,
) -> None:
    cluster(replicas.apiserver, "16", 60)  # room 20
    await replicas.start(3, policy="Deny")
    old = await replicas.elected()
    await bind_all(replicas, [f"p-{i:03d}" for i in range(9)], replicas.members)
    assert len(replicas.admitted) == 9
    await replicas.all_seen()

    old.proxy.cut()
    history = await advance_until(
        replicas, lambda: any(m.elector.leading for m in replicas.members if m is not old), "a new leader"
    )
    new = await replicas.elected()
    assert new is not old
    stepped_down = next(at for event, at in old.elector.events if event == "stepped-down")
    acquired = next(at for event, at in new.elector.events if event == "acquired")
    assert stepped_down < acquired  # never two deciders
    assert stepped_down <= old.elector._renewed_at + RENEW_DEADLINE + RETRY
    assert all(len(leaders) <= 1 for _, leaders in history)
    assert old.counter("limitguard_leader") == 0
    assert old.counter("limitguard_leader_transitions_total", direction="lost") == 1

    # The cut-off replica knows no leader: Deny. The others forward to the new leader.
    refused = await replicas.bind(old, "p-009")
    assert refused["allowed"] is False and refused["status"]["code"] == 503
    await bind_all(replicas, pending(replicas, 60), [m for m in replicas.members if m is not old])
    assert len(replicas.admitted) == 20

    # Back on the network, the old leader follows: it sees the new holder and forwards to it.
    old.proxy.restore()
    await replicas.clock.advance(RETRY * 3)
    assert old.elector.leader_address() == new.url.removeprefix("https://")
    denied = await replicas.bind(old, pending(replicas, 60)[0])
    assert denied["allowed"] is False and "exceeds remaining" in denied["status"]["message"]
    assert old.counter("limitguard_forwarded_requests_total", decision="denied") == 1


@pytest.mark.parametrize("policy", ["Local", "Allow", "Deny"])
async def test_follower_that_cannot_reach_the_leader_answers_by_policy(
    replicas: ReplicaSet, policy: str
) -> None:
    cluster(replicas.apiserver, "8", 20)  # room 10
    await replicas.start(2, policy=policy)
    leader = await replicas.elected()
    follower = next(m for m in replicas.members if m is not leader)
    await leader.serve.runner.cleanup()  # the leader still renews its lease but serves nobody

    answers = await bind_all(replicas, [f"p-{i:03d}" for i in range(20)], [follower])

    assert follower.counter("limitguard_forward_failures_total", reason="unreachable") == 20
    assert follower.counter("limitguard_no_leader_answers_total", policy=policy) == 20
    assert leader.elector.leading
    if policy == "Local":  # the follower's own ledger: exact for what it alone decides
        assert len(replicas.admitted) == 10
    elif policy == "Allow":
        assert len(replicas.admitted) == 20
        assert all("not checked" in a["warnings"][0] for a in answers)
    else:
        assert replicas.admitted == []
        assert all(a["status"]["code"] == 503 for a in answers)
