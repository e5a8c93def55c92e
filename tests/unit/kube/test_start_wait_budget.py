"""A replica's first-round wait and its forward share one budget, forwardTimeoutSeconds.

A replica that has not yet read the Lease waits for its first election round before forwarding a
ledger request. The chart keeps forwardTimeoutSeconds below the webhooks' timeoutSeconds (3 s); if
the forward after that wait got the whole forwardTimeoutSeconds again, the follower could still be
waiting when the apiserver times the call out (webhook timeoutSeconds, k8s.io/api
admissionregistration/v1 ValidatingWebhook.TimeoutSeconds). The clock is the test's: the wait is
"long" because the test advances the clock before the first round ends, not because time passes.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest
from prometheus_client import CollectorRegistry

from limitguard.admission.forward import (
    LeaderRouted,
    LedgerRequest,
    decode_for_leader,
)
from limitguard.core.config import NoLeaderPolicy
from limitguard.core.response import Response, allowed
from limitguard.kube.replica_metrics import ReplicaMetrics
from tests.support import binding

FORWARD_TIMEOUT = 2.0


class Clock:
    def __init__(self) -> None:
        self.value = 100.0

    def __call__(self) -> float:
        return self.value


class Starting:
    """A replica before its first election round: nobody known to lead until the round ends."""

    deciding = False

    def __init__(self) -> None:
        self.first_round = asyncio.Event()
        self.address: str | None = None

    def leader_address(self) -> str | None:
        return self.address


class Leader:
    """The leader at the other end, recording the time each forward was given."""

    timeout_seconds = FORWARD_TIMEOUT

    def __init__(self) -> None:
        self.timeouts: list[float | None] = []

    async def forward(self, address: str, request: LedgerRequest, timeout: float | None = None) -> Response:
        self.timeouts.append(timeout)
        return allowed("leader")


def router(leadership: Starting, leader: Leader, clock: Clock) -> LeaderRouted:
    def local(review) -> Response:
        raise AssertionError("a replica that does not lead must not decide a ledger request")

    metrics = ReplicaMetrics(CollectorRegistry())
    return LeaderRouted(local, leadership, leader, NoLeaderPolicy.DENY, metrics, now=clock)  # type: ignore[arg-type]


async def answer_after_first_round(waited: float) -> tuple[Response, Leader]:
    clock, leadership, leader = Clock(), Starting(), Leader()
    routed = router(leadership, leader, clock)

    async def first_round_ends() -> None:
        await asyncio.sleep(0)  # the request is waiting by now
        clock.value += waited
        leadership.address = "leader:8443"
        leadership.first_round.set()

    review = decode_for_leader(orjson.dumps(binding("p", "node1", uid="b1")))
    ending = asyncio.create_task(first_round_ends())
    response = await routed(review)
    await ending
    return response, leader


async def test_the_forward_after_a_start_wait_gets_only_what_is_left() -> None:
    response, leader = await answer_after_first_round(0.75)
    assert response.allowed and leader.timeouts == [pytest.approx(FORWARD_TIMEOUT - 0.75)]


async def test_no_time_left_after_the_wait_is_answered_by_the_policy_without_forwarding() -> None:
    response, leader = await answer_after_first_round(FORWARD_TIMEOUT)
    assert leader.timeouts == []
    assert not response.allowed and response.code == 503
    assert "no time left to forward" in response.message


async def test_a_replica_that_knows_the_leader_forwards_with_the_whole_timeout() -> None:
    clock, leadership, leader = Clock(), Starting(), Leader()
    leadership.first_round.set()
    leadership.address = "leader:8443"
    response = await router(leadership, leader, clock)(
        decode_for_leader(orjson.dumps(binding("p", "node1", uid="b2")))
    )
    assert response.allowed and leader.timeouts == [None]  # the Forwarder's own forwardTimeoutSeconds
