"""N replicas behind one apiserver admit exactly what one process would (issue 14).

Real `limitguard serve` instances (tests/live/replicaset.py) race bindings for one node; the test
plays the apiserver, persisting every allowed binding. Leadership moves only when the test advances
the election clock, so every verdict is about ordering and outcomes, never about speed.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from limitguard.admission.validating import Validator
from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import start_serve
from tests.integration.kube.helpers import write_kubeconfig
from tests.integration.kube.replicaset import LEASE, NAMESPACE, ReplicaSet, cluster
from tests.support import REPO

PODS = 60


def room(count: int) -> str:
    """Node cpu whose capacity at 125% is *count* cpus (count divisible by 5)."""
    return str(count * 4 // 5)


@pytest.mark.parametrize(("count", "capacity"), [(2, 10), (3, 20)])
async def test_racing_bindings_across_replicas_admit_exactly_the_room(
    replicas: ReplicaSet, count: int, capacity: int
) -> None:
    cluster(replicas.apiserver, room(capacity), PODS)
    await replicas.start(count)
    leader = await replicas.elected()
    followers = [member for member in replicas.members if member is not leader]

    answers = await asyncio.gather(
        *(replicas.bind(replicas.members[index % count], f"p-{index:03d}") for index in range(PODS))
    )

    assert len(replicas.admitted) == capacity == sum(answer["allowed"] for answer in answers)
    assert all(
        "exceeds remaining" in answer["status"]["message"] for answer in answers if not answer["allowed"]
    )
    for follower in followers:
        assert (
            follower.counter("limitguard_forwarded_requests_total", decision="allowed")
            + follower.counter("limitguard_forwarded_requests_total", decision="denied")
            == PODS // count
        )
        assert follower.counter("limitguard_forward_duration_seconds_count") == PODS // count
        assert follower.counter("limitguard_leader") == 0
    assert leader.counter("limitguard_leader") == 1
    assert leader.counter("limitguard_leader_deciding") == 1
    assert leader.counter("limitguard_forwarded_requests_total", decision="allowed") == 0
    lease = replicas.apiserver.lease(NAMESPACE, LEASE)
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == leader.name
    assert lease["metadata"]["annotations"]["limitguard.io/leader-address"] == leader.url.removeprefix(
        "https://"
    )


@pytest.mark.parametrize(("count", "capacity"), [(2, 10), (3, 20)])
async def test_paced_bindings_across_replicas_admit_exactly_the_room(
    replicas: ReplicaSet, count: int, capacity: int
) -> None:
    """Paced: waves of one binding per replica, each wave after every cache has seen the last."""
    cluster(replicas.apiserver, room(capacity), PODS)
    await replicas.start(count)
    await replicas.elected()

    for wave in range(PODS // count):
        await asyncio.gather(
            *(
                replicas.bind(member, f"p-{wave * count + index:03d}")
                for index, member in enumerate(replicas.members)
            )
        )
        await replicas.all_seen()
    assert len(replicas.admitted) == capacity


@pytest.mark.parametrize("mode", ["live-without-identity", "cluster-file-with-identity"])
async def test_without_identity_or_with_a_cluster_file_one_process_decides_alone(
    replicas: ReplicaSet, tmp_path: Path, mode: str
) -> None:
    cluster(replicas.apiserver, "8", 0)
    url = await replicas.apiserver.start()
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    source = (
        ["--kubeconfig", write_kubeconfig(tmp_path, url)]
        if mode.startswith("live")
        else ["--cluster", str(REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml")]
    )
    args = parser.parse_args(
        [*source, "--cert-dir", str(tmp_path / "certs"), "--host", "127.0.0.1", "--port", "0"]
    )
    environ = (
        {} if mode.startswith("live") else {"POD_NAME": "a", "POD_NAMESPACE": "b", "POD_IP": "127.0.0.1"}
    )
    running = await start_serve(args, environ)
    try:
        assert running.replica is None
        assert isinstance(running.services.handlers["validate"], Validator)
        assert not any(
            route.resource.canonical == "/leader/validate" for route in running.runner.app.router.routes()
        )
        assert replicas.apiserver.lease(NAMESPACE, LEASE) is None
    finally:
        await running.stop()


@pytest.mark.parametrize("elected", [True, False], ids=["with-election", "without-identity"])
async def test_all_answers_before_any_binding_is_persisted(replicas: ReplicaSet, elected: bool) -> None:
    """The widest race: no replica's watch shows any of the burst until every answer is in.

    One decision point admits the room; replicas deciding alone (the old behaviour, no Downward API
    identity) each admit the whole room from their own ledger: twice the room with two.
    """
    cluster(replicas.apiserver, room(10), 30)
    await replicas.start(2, identity=elected)
    if elected:
        await replicas.elected()
    answers = await asyncio.gather(
        *(replicas.bind(replicas.members[i % 2], f"p-{i:03d}", persist=False) for i in range(30))
    )
    for index, answer in enumerate(answers):
        if answer["allowed"]:
            replicas.persist(f"p-{index:03d}")
    assert len(replicas.admitted) == (10 if elected else 20)
