"""A leader change writes nothing new: the next leader lists the reports the last one wrote."""

from __future__ import annotations

from limitguard.testing.builders import make_namespace, make_node, make_pod
from tests.integration.kube.helpers import eventually
from tests.integration.kube.replicaset import HANG_GUARD, ReplicaSet
from tests.integration.kube.reports_helpers import install_crds, stored_reports
from tests.integration.kube.test_live_failover import advance_until


def versions(replicas: ReplicaSet) -> dict[str, str]:
    return {
        r["metadata"]["name"]: r["metadata"]["resourceVersion"] for r in stored_reports(replicas.apiserver)
    }


async def test_a_new_leader_writes_no_report_and_no_event_the_old_one_wrote(replicas: ReplicaSet) -> None:
    install_crds(replicas.apiserver)
    replicas.apiserver.apply("namespaces", make_namespace("default"))
    over = make_node("node1", cpu="4")
    over["metadata"]["uid"] = "uid-node1"
    replicas.apiserver.apply("nodes", over)
    replicas.apiserver.apply("pods", make_pod("default", "web-1", "node1", cpu_limit="6", uid="uid-web-1"))
    settings = {
        "limitAware": {
            "defaultLimitToAllocatableRatio": {"cpu": 100},
            "namespaceEnforcement": {"default": "Warn"},
        },
        "reports": {"enabled": True},
        "events": {"enabled": True},
    }
    await replicas.start(2, settings=settings)
    old = await replicas.elected()
    await eventually(
        lambda: len(versions(replicas)) == 2, "the node's and the pod's reports written", HANG_GUARD
    )
    written = versions(replicas)
    assert old.counter("limitguard_cluster_writes_total", kind="report", result="written") == 2

    await replicas.kill(old)
    await advance_until(replicas, lambda: len(replicas.leaders()) == 1, "a new leader")
    new = await replicas.elected()
    assert new is not old
    await eventually(
        lambda: new.counter("limitguard_reports", finding="node") == 1,
        "the new leader's first pass",
        HANG_GUARD,
    )
    await replicas.clock.advance(30.0)  # more passes: still nothing to write
    assert versions(replicas) == written
    for result in ("written", "conflict"):  # not even a create refused as existing
        assert new.counter("limitguard_cluster_writes_total", kind="report", result=result) == 0
    assert replicas.apiserver.events() == []  # the node was over before: no transition to announce
