"""`limitguard audit -o openreports|wgpolicyk8s` prints what the leader writes for the same state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from limitguard.cli import audit as audit_command
from limitguard.cli import kubectl_plugin
from limitguard.cli import reports as reports_command
from limitguard.cli.configfile import load_config
from limitguard.cli.policyreports import releases_for
from limitguard.core.config import ReportsApi
from limitguard.testing.builders import node, pod
from limitguard.testing.fakeapi import FakeApiServer
from limitguard.testing.kubeconfig import TOKEN
from tests.integration.kube.helpers import Connected, eventually
from tests.integration.kube.reports_helpers import (
    install_crds,
    keeping,
    stored_reports,
    without_server_fields,
)
from tests.integration.kube.test_reports_pods_configmaps import scheduler_configmap
from tests.support import container, run_command

Connect = Callable[..., object]


def write_config(directory: Path, api: ReportsApi) -> str:
    path = directory / "limitguard.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "limitguard.io/v1alpha1",
                "kind": "LimitGuardConfiguration",
                "limitAware": {
                    "defaultLimitToAllocatableRatio": {"cpu": 100},
                    "namespaceEnforcement": {"shop": "DryRun"},
                },
                "reports": {"enabled": True, "api": api.value, "schedulerConfigNamespaces": ["scheduling"]},
            }
        )
    )
    return str(path)


@pytest.mark.parametrize("api", list(ReportsApi))
async def test_audit_prints_the_objects_the_leader_writes(
    apiserver: FakeApiServer,
    connect: Connect,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    api: ReportsApi,
) -> None:
    install_crds(apiserver, api)
    apiserver.apply("nodes", node("n1", cpu="4", uid="uid-n1"))
    apiserver.apply("nodes", node("n2", cpu="4", uid="uid-n2"))
    apiserver.apply(
        "pods",
        pod(
            "web",
            namespace="shop",
            node_name="n1",
            uid="uid-web",
            containers=[container("c", limits={"cpu": "6"})],
        ),
    )
    apiserver.apply("configmaps", scheduler_configmap(with_ratio=True))
    config_path = write_config(tmp_path, api)
    config = load_config(config_path)
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config, lambda: releases_for(config, apiserver.git_version))
    watching = keeper.keeper.configmaps
    assert watching is not None
    task = asyncio.create_task(watching.run(connected.feed.client, connected.clock))
    try:
        await eventually(lambda: watching.synced, "scheduler ConfigMaps listed")
        await keeper.settle()
    finally:
        task.cancel()
    written = sorted(
        (without_server_fields(r) for r in stored_reports(apiserver, api)),
        key=lambda r: r["metadata"]["name"],
    )
    assert {r["metadata"]["labels"]["limitguard.io/report"] for r in written} == {
        "node",
        "pod",
        "scheduler-config",
    }

    kubeconfig = str(tmp_path / "kubeconfig")  # written by the connect fixture
    argv = ["--kubeconfig", kubeconfig, "--config", config_path, "-o", api.value]
    code, out, err = await asyncio.to_thread(run_command, audit_command, argv, capsys)
    assert code == 1, err  # a node is over its ratio
    printed = yaml.safe_load(out)
    assert printed["kind"] == "List"
    assert sorted(printed["items"], key=lambda r: r["metadata"]["name"]) == written

    # -n keeps the cluster-scoped reports and that namespace's.
    code, out, _ = await asyncio.to_thread(run_command, audit_command, [*argv, "-n", "scheduling"], capsys)
    kinds = sorted((r["kind"], r["metadata"].get("namespace", "")) for r in yaml.safe_load(out)["items"])
    namespaced = "Report" if api is ReportsApi.OPENREPORTS else "PolicyReport"
    cluster = "ClusterReport" if api is ReportsApi.OPENREPORTS else "ClusterPolicyReport"
    assert kinds == [(cluster, ""), (cluster, ""), (namespaced, "scheduling")]


def two_contexts(directory: Path, good: str) -> str:
    """A kubeconfig whose current context is a server nobody listens on, and a context `fake`."""
    path = directory / "contexts"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: fake\n  cluster:\n    server: {good}\n- name: nowhere\n  cluster:\n    server: http://127.0.0.1:9\n"
        f"users:\n- name: tester\n  user:\n    token: {TOKEN}\n"
        "contexts:\n- name: fake\n  context: {cluster: fake, user: tester}\n"
        "- name: nowhere\n  context: {cluster: nowhere, user: tester}\ncurrent-context: nowhere\n"
    )
    return str(path)


async def test_the_kubectl_plugin_reads_the_context_kubectl_passes_and_reports_delete_cleans_up(
    apiserver: FakeApiServer, connect: Connect, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install_crds(apiserver)
    apiserver.apply("nodes", node("n1", cpu="4", uid="uid-n1"))
    config_path = write_config(tmp_path, ReportsApi.OPENREPORTS)
    config = load_config(config_path)
    connected: Connected = await connect(config=config, wait_ready=True)  # type: ignore[assignment]
    await keeping(connected, config).settle()
    assert len(stored_reports(apiserver)) == 1
    kubeconfig = two_contexts(tmp_path, f"http://127.0.0.1:{apiserver.port}")
    environ = {"KUBECONFIG": kubeconfig}

    def plugin(*argv: str) -> tuple[int, str]:
        code = kubectl_plugin.main(list(argv), environ)
        return code, capsys.readouterr().out

    code, out = await asyncio.to_thread(
        plugin, "audit", "--context", "fake", "--config", config_path, "-o", "openreports", "--timeout", "20"
    )
    assert code == 0 and len(yaml.safe_load(out)["items"]) == 1
    code, _ = await asyncio.to_thread(
        plugin, "audit", "--config", config_path, "--timeout", "1"
    )  # current context: nowhere
    assert code == 2

    code, out, _ = await asyncio.to_thread(
        run_command,
        reports_command,
        ["delete", "--kubeconfig", kubeconfig, "--context", "fake", "--config", config_path],
        capsys,
    )
    assert code == 0
    assert out.startswith("openreports.io/v1alpha1: 1 report(s) deleted")
    assert stored_reports(apiserver) == []
