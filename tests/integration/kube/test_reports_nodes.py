"""Node ClusterReports against the fake apiserver: they follow ratio changes, pools, annotations and
node deletion; unchanged state writes nothing; both API groups; the upstream CRD schemas accept them."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from limitguard.core.config import ReportsApi
from limitguard.core.pools import parse_node_pools
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.kube.writes import Outcome
from limitguard.testing.builders import node, pod
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import Connected
from tests.integration.kube.reports_helpers import (
    by_scope,
    install_crds,
    keeping,
    reports_config,
    stored_reports,
    without_server_fields,
)
from tests.reportschemas import schema_validator
from tests.support import container

Connect = Callable[..., object]


def busy_pod(name: str, node_name: str, cpu: str, namespace: str = "default") -> dict:
    return pod(
        name, namespace=namespace, node_name=node_name, containers=[container("c", limits={"cpu": cpu})]
    )


def results_of(report: dict) -> dict[str, tuple[str, dict]]:
    return {r["rule"]: (r["result"], r["properties"]) for r in report["results"]}


@pytest.mark.parametrize("api", list(ReportsApi))
async def test_node_reports_follow_ratios_pools_annotations_and_deletion(
    apiserver: FakeApiServer, connect: Connect, api: ReportsApi
) -> None:
    install_crds(apiserver, api)
    apiserver.apply("nodes", node("n1", cpu="8", uid="uid-n1"))
    apiserver.apply("nodes", node("n2", cpu="8", uid="uid-n2", labels={"pool": "gpu"}))
    apiserver.apply("pods", busy_pod("a", "n1", "6"))
    apiserver.apply("pods", busy_pod("b", "n1", "4"))
    pools, problems = parse_node_pools(
        [
            {
                "name": "gpu",
                "nodeSelector": {"matchLabels": {"pool": "gpu"}},
                "limitToAllocatableRatio": {"cpu": 150},
            }
        ]
    )
    assert not problems
    config = reports_config(api, ratios={"cpu": 125}, node_pools=pools)
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config)
    await keeper.settle()

    reports = by_scope(stored_reports(apiserver, api))
    assert set(reports) == {"Node//n1", "Node//n2"}
    n1, n2 = reports["Node//n1"], reports["Node//n2"]
    assert n1["metadata"]["name"] == "limitguard-uid-n1"
    assert n1["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-n1"}
    ]
    assert results_of(n1)["cpu"][0] == "pass"  # 10 of 8 x 125% = 10: equality fits
    assert results_of(n1)["cpu"][1]["ratioSource"] == "default"
    assert results_of(n2)["cpu"][1] == {
        "resource": "cpu",
        "allocatedLimits": "0",
        "limitCapacity": "12",
        "allocatable": "8",
        "ratio": "150%",
        "ratioSource": "pool:gpu",
        "resultID": results_of(n2)["cpu"][1]["resultID"],
    }
    validator = schema_validator(api, namespaced=False)
    for report in reports.values():
        assert not list(validator.iter_errors(report))

    # An annotation lowers n1's ratio: the node goes over, its report fails and names its top pods.
    apiserver.apply(
        "nodes", node("n1", cpu="8", uid="uid-n1", annotations={RATIO_ANNOTATION: json.dumps({"cpu": 100})})
    )
    await connected.applied("nodes", apiserver.rv)
    await keeper.settle()
    n1 = by_scope(stored_reports(apiserver, api))["Node//n1"]
    status, properties = results_of(n1)["cpu"]
    assert (status, properties["ratioSource"], properties["limitCapacity"]) == ("fail", "annotation", "8")
    assert properties["topPods"] == "default/a, default/b"
    assert n1["summary"] == {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0}

    # n2 leaves its pool: the default ratio applies.
    apiserver.apply("nodes", node("n2", cpu="8", uid="uid-n2"))
    await connected.applied("nodes", apiserver.rv)
    await keeper.settle()
    assert results_of(by_scope(stored_reports(apiserver, api))["Node//n2"])["cpu"][1]["ratio"] == "125%"

    # A deleted node's report is left to garbage collection (owned by the node): no write.
    written = keeper.writes.outcomes[("report", Outcome.WRITTEN)]
    apiserver.delete("nodes", "n2")
    await connected.applied("nodes", apiserver.rv)
    await keeper.settle()
    assert keeper.writes.outcomes[("report", Outcome.WRITTEN)] == written
    assert "Node//n2" not in by_scope(list(keeper.keeper.reports()))


async def test_unchanged_state_writes_nothing_and_a_new_leader_writes_nothing_new(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    install_crds(apiserver)
    for index in range(3):
        apiserver.apply("nodes", node(f"n{index}", cpu="4", uid=f"uid-{index}"))
    apiserver.apply("pods", busy_pod("a", "n0", "5"))
    config = reports_config(ratios={"cpu": 100})
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    first = keeping(connected, config)
    await first.settle()
    assert first.writes.outcomes[("report", Outcome.WRITTEN)] == 3
    before = apiserver.rv
    for _ in range(3):
        await first.settle()
        connected.clock.advance(first.keeper.settings.refresh_seconds)  # past any refresh
    assert apiserver.rv == before  # nothing written: nothing changed

    # A relist of the state (the watch history compacted) changes nothing either.
    apiserver.compact()
    apiserver.close_watches()
    await connected.applied("pods", before)
    await first.settle()
    assert apiserver.rv == before

    # Another leader starts from what it observes: it lists the reports and writes nothing.
    second = keeping(connected, config)
    await second.settle()
    assert apiserver.rv == before
    assert second.writes.outcomes[("report", Outcome.WRITTEN)] == 0
    assert len(second.keeper.writer.observed) == 3  # type: ignore[union-attr]


async def test_audit_objects_equal_what_the_leader_writes(apiserver: FakeApiServer, connect: Connect) -> None:
    install_crds(apiserver)
    apiserver.apply("nodes", node("n1", cpu="4", uid="uid-n1"))
    apiserver.apply("pods", busy_pod("a", "n1", "5"))
    config = reports_config(ratios={"cpu": 100})
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config)
    await keeper.settle()
    written = sorted(
        (without_server_fields(r) for r in stored_reports(apiserver)), key=lambda r: r["metadata"]["name"]
    )
    desired = sorted(keeper.keeper.reports(), key=lambda r: r["metadata"]["name"])
    assert written == desired


async def test_numbers_that_move_with_every_pod_are_refreshed_lazily(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    install_crds(apiserver)
    apiserver.apply("nodes", node("n1", cpu="8", uid="uid-n1"))
    config = reports_config(ratios={"cpu": 100})
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config)
    await keeper.settle()
    first = apiserver.rv

    def allocated() -> str:
        (report,) = stored_reports(apiserver)
        return results_of(report)["cpu"][1]["allocatedLimits"]

    apiserver.apply("pods", busy_pod("a", "n1", "2"))  # still within: only allocatedLimits moves
    await connected.applied("pods", apiserver.rv)
    await keeper.settle()
    assert allocated() == "0" and not [c for c in apiserver.history if c.rv > first and c.kind != "pods"]
    connected.clock.advance(keeper.keeper.settings.refresh_seconds)
    await keeper.settle()
    assert allocated() == "2"

    apiserver.apply("pods", busy_pod("b", "n1", "7"))  # over: a new verdict is written at once
    await connected.applied("pods", apiserver.rv)
    await keeper.settle()
    assert (allocated(), results_of(stored_reports(apiserver)[0])["cpu"][0]) == ("9", "fail")
