"""Start-up: a replica started into a burst does not decide alone before it has seen the Lease, and
the replica that creates the Lease decides at once (no predecessor's approvals to catch up on).

Issue scenario: two replicas given 60 concurrent bindings soon after start admitted 11 into room
for 10, because the burst reached a replica before it knew the first leader. Election semantics
from k8s.io/client-go tools/leaderelection (leaderelection.go, resourcelock/leaselock.go, v0.34).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from prometheus_client import CollectorRegistry

from limitguard.admission.forward import LeaderRouted, decode_for_leader
from limitguard.admission.validating import Validator
from limitguard.core.config import NoLeaderPolicy
from limitguard.core.response import Response, allowed
from limitguard.kube.client import KubeClient, load_configuration
from limitguard.kube.leader import Elector, LeaseRecord, lease_object
from limitguard.kube.replica_metrics import ReplicaMetrics
from limitguard.testing.clock import ManualClock
from limitguard.testing.examples import config, worked_example
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import eventually, lease_elector, write_kubeconfig
from tests.support import binding

NS, NAME = "limitguard", "limitguard"


@pytest.fixture
async def client(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[KubeClient]:
    url = await apiserver.start()
    configuration, _ = load_configuration(write_kubeconfig(tmp_path, url))
    kube = KubeClient(configuration, 30.0)
    yield kube
    await kube.close()


def elector(client: KubeClient, identity: str, clock: ManualClock, catch_ups: list[str]) -> Elector:
    async def catch_up(version: str) -> str:
        catch_ups.append(version)
        return "watch"

    return lease_elector(client, NS, NAME, identity, clock, catch_up=catch_up)


async def stop(*tasks: asyncio.Task) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_the_replica_that_creates_the_lease_decides_without_a_catch_up(client, apiserver) -> None:
    clock, catch_ups = ManualClock(), []
    first = elector(client, "a", clock, catch_ups)
    task = asyncio.create_task(first.run())
    await eventually(lambda: first.first_round.is_set(), "first round done", 60)
    assert first.deciding  # in the same round that created the Lease
    assert catch_ups == []
    assert apiserver.lease(NS, NAME)["spec"]["holderIdentity"] == "a"
    await stop(task)


async def test_a_replica_taking_over_an_existing_lease_still_catches_up(client, apiserver) -> None:
    released = lease_object(NS, NAME, LeaseRecord("", 1))  # a previous leader released it
    await client.send_json("POST", f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", released, None)
    clock, catch_ups = ManualClock(), []
    taker = elector(client, "b", clock, catch_ups)
    task = asyncio.create_task(taker.run())
    await eventually(lambda: taker.deciding, "b decides after its catch-up", 60)
    assert len(catch_ups) == 1
    await stop(task)


class RecordingForwarder:
    """Stands in for the HTTPS hop only: records where a review would have gone."""

    timeout_seconds = 2.0  # forwardTimeoutSeconds: the start wait and the forward share it

    def __init__(self) -> None:
        self.sent_to: list[str] = []
        self.timeouts: list[float | None] = []

    async def forward(self, address: str, request: object, timeout: float | None = None) -> Response:
        self.sent_to.append(address)
        self.timeouts.append(timeout)
        return allowed("forwarded")


async def test_a_replica_started_into_a_burst_waits_for_its_first_look_at_the_lease(
    client, apiserver
) -> None:
    clock = ManualClock()
    leader = elector(client, "a", clock, [])
    leader_task = asyncio.create_task(leader.run())
    await eventually(lambda: leader.deciding, "a decides", 60)

    late = elector(client, "b", clock, [])  # not started yet: it has not seen the Lease
    state = worked_example()
    forwarder = RecordingForwarder()
    routed = LeaderRouted(
        Validator(state, config()),
        late,
        forwarder,  # type: ignore[arg-type]
        NoLeaderPolicy.LOCAL,
        ReplicaMetrics(CollectorRegistry()),
        now=clock.now,
    )
    request = decode_for_leader(orjson.dumps(binding("pod5", "node2", uid="burst-1")))
    answering = asyncio.create_task(routed(request))
    await asyncio.sleep(0)
    assert not answering.done()  # waiting, not deciding alone
    late_task = asyncio.create_task(late.run())
    answer = await asyncio.wait_for(answering, 60)
    assert answer.reason == "forwarded" and forwarder.sent_to == ["a:8443"]
    # the forward got what the wait left of forwardTimeoutSeconds, not all of it again
    assert forwarder.timeouts[0] is not None and forwarder.timeouts[0] <= forwarder.timeout_seconds
    assert len(state.ledger) == 0  # the follower held nothing of its own
    await stop(leader_task, late_task)
