"""Pod Reports (Warn/DryRun violations, bounded) and scheduler ConfigMap Reports (running release and
upgrade readiness) against the fake apiserver."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from limitguard.core.config import Enforcement, ReportsApi
from limitguard.kube.reports.metrics import FindingsCollector
from limitguard.testing.builders import node, pod
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import Connected, eventually
from tests.integration.kube.reports_helpers import (
    by_scope,
    fixed_releases,
    install_crds,
    keeping,
    reports_config,
    stored_reports,
)
from tests.reportschemas import schema_validator
from tests.support import container

Connect = Callable[..., object]

RATIO_IGNORED_UNTIL_1_36 = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: LeastAllocated
        resources: [{name: cpu, weight: 1}]
"""
RATIO = """        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
"""


def limited(name: str, node_name: str, cpu: str, namespace: str, uid: str | None = None) -> dict:
    return pod(
        name,
        namespace=namespace,
        node_name=node_name,
        uid=uid,
        containers=[container("c", limits={"cpu": cpu})],
    )


def scheduler_configmap(with_ratio: bool, uid: str = "uid-cm") -> dict:
    text = RATIO_IGNORED_UNTIL_1_36 + (RATIO if with_ratio else "")
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "sched", "namespace": "scheduling", "uid": uid},
        "data": {"config.yaml": text},
    }


def statuses(report: dict) -> list[tuple[str, str, str]]:
    return [(r["policy"], r["rule"], r["result"]) for r in report["results"]]


async def test_pods_in_violation_under_warn_and_dryrun_get_reports_up_to_the_bound(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    install_crds(apiserver)
    apiserver.apply("nodes", node("n1", cpu="4", uid="uid-n1"))
    apiserver.apply("pods", limited("big", "n1", "3", "warned", uid="uid-big"))
    apiserver.apply("pods", limited("small", "n1", "2", "warned", uid="uid-small"))
    apiserver.apply("pods", limited("dry", "n1", "1", "trial", uid="uid-dry"))
    apiserver.apply("pods", limited("strict", "n1", "1", "denied", uid="uid-strict"))  # Deny: not reported
    config = reports_config(
        ratios={"cpu": 100},
        namespace_enforcement={"warned": Enforcement.WARN, "trial": Enforcement.DRY_RUN},
        max_pod_reports=2,
    )
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config)
    await keeper.settle()

    reports = by_scope(stored_reports(apiserver))
    pods = sorted(key for key in reports if key.startswith("Pod/"))
    assert pods == ["Pod/warned/big", "Pod/warned/small"]  # the two holding most of the excess
    big = reports["Pod/warned/big"]
    assert statuses(big) == [("pod-limit-ratio", "cpu", "warn")]
    assert big["configuration"] == {"limits": {"statusFilter": ["warn", "fail"]}}
    assert big["metadata"]["ownerReferences"][0] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "big",
        "uid": "uid-big",
    }
    assert not list(schema_validator(ReportsApi.OPENREPORTS, namespaced=True).iter_errors(big))

    registry = CollectorRegistry()
    registry.register(FindingsCollector(keeper.keeper))
    assert registry.get_sample_value("limitguard_pod_violations", {"enforcement": "Warn"}) == 2
    assert registry.get_sample_value("limitguard_pod_violations", {"enforcement": "DryRun"}) == 1
    assert registry.get_sample_value("limitguard_pod_reports_dropped") == 1
    assert registry.get_sample_value("limitguard_reports", {"finding": "pod"}) == 2

    # The big pod goes: the node is within its ratio again and every pod report is deleted.
    apiserver.delete("pods", "warned/big")
    await connected.applied("pods", apiserver.rv)
    await keeper.settle()
    assert [key for key in by_scope(stored_reports(apiserver)) if key.startswith("Pod/")] == []
    assert registry.get_sample_value("limitguard_pod_reports_dropped") == 0


async def test_configmap_reports_follow_edits_and_a_release_change(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    install_crds(apiserver)
    apiserver.apply("configmaps", scheduler_configmap(with_ratio=True))
    apiserver.apply(
        "configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "other", "namespace": "scheduling", "uid": "x"},
            "data": {"a": "b"},
        },
    )
    config = reports_config(namespaces=("scheduling",), events=True)
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    releases = fixed_releases(35)
    keeper = keeping(connected, config, releases)
    watching = keeper.keeper.configmaps
    assert watching is not None
    task = asyncio.create_task(watching.run(connected.feed.client, connected.clock))
    try:
        await eventually(lambda: watching.synced, "scheduler ConfigMaps listed")
        await keeper.settle()
        (report,) = stored_reports(apiserver)
        assert report["metadata"]["namespace"] == "scheduling"
        # 1.35 only warns; 1.36 refuses it: upgrade readiness fails before the upgrade.
        assert statuses(report) == [
            ("scheduler-config", "fit.ratio", "warn"),
            ("scheduler-config-upgrade", "fit.ratio", "fail"),
        ]
        assert not list(schema_validator(ReportsApi.OPENREPORTS, namespaced=True).iter_errors(report))
        assert apiserver.events() == []

        # The control plane is upgraded: the running release now rejects it, and an event says so.
        releases.holder["minor"] = 36  # type: ignore[attr-defined]
        await keeper.settle()
        (report,) = stored_reports(apiserver)
        assert statuses(report) == [
            ("scheduler-config", "fit.ratio", "fail"),
            ("scheduler-config-upgrade", "ready", "pass"),
        ]
        (event,) = apiserver.events("scheduling")
        assert (event["reason"], event["type"], event["regarding"]["name"]) == (
            "SchedulerConfigInvalid",
            "Warning",
            "sched",
        )

        # The ConfigMap is fixed: clean now and after the next upgrade.
        apiserver.apply("configmaps", scheduler_configmap(with_ratio=False))
        await eventually(lambda: "requestedToCapacityRatio" not in str(watching.objects), "the edit watched")
        await keeper.settle()
        (report,) = stored_reports(apiserver)
        assert statuses(report) == [
            ("scheduler-config", "valid", "pass"),
            ("scheduler-config-upgrade", "ready", "pass"),
        ]
    finally:
        task.cancel()


async def test_absent_crds_write_nothing_are_looked_for_again_and_serving_goes_on(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    apiserver.apply("nodes", node("n1", cpu="4", uid="uid-n1"))
    config = reports_config(ratios={"cpu": 100})
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config)
    registry = CollectorRegistry()
    registry.register(FindingsCollector(keeper.keeper))
    await keeper.settle()
    assert keeper.keeper.available is False
    assert (
        registry.get_sample_value("limitguard_reports_api_available", {"api": "openreports.io/v1alpha1"}) == 0
    )
    discoveries = sum(1 for seen in apiserver.requests if seen.kind == "discovery")
    await keeper.settle()  # within discovery_seconds: not asked again
    assert sum(1 for seen in apiserver.requests if seen.kind == "discovery") == discoveries
    assert connected.state.ready

    install_crds(apiserver)
    connected.clock.advance(keeper.keeper.settings.discovery_seconds)
    await keeper.settle()
    assert keeper.keeper.available is True
    assert (
        registry.get_sample_value("limitguard_reports_api_available", {"api": "openreports.io/v1alpha1"}) == 1
    )
    assert list(by_scope(stored_reports(apiserver))) == ["Node//n1"]

    # The CRDs are removed while limitguard runs: its next writes find the report, then its
    # collection, gone, and discovery is asked again.
    apiserver.uninstall_crd("openreports.io", "clusterreports")
    apiserver.uninstall_crd("openreports.io", "reports")
    apiserver.apply("nodes", node("n1", cpu="2", uid="uid-n1"))
    await connected.applied("nodes", apiserver.rv)
    for _ in range(3):
        await keeper.settle()
    assert keeper.keeper.available is False
    assert (
        registry.get_sample_value("limitguard_reports_api_available", {"api": "openreports.io/v1alpha1"}) == 0
    )
