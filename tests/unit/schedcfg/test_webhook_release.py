"""The ConfigMap webhook validates for a configured release, else the cluster's /version (issue 15)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from kubernetes.client import Configuration
from limitguard.admission.configmaps import configmap_check, scheduler_release
from limitguard.kube.client import KubeClient
from limitguard.schedcfg.rules.releases import Release

EBS = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}],
}


def configmap(config: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "sched", "namespace": "kube-system"},
        "data": {"config.yaml": json.dumps(config)},
    }


def test_the_release_decides_the_admission_verdict() -> None:
    allowed = configmap_check(configmap(EBS), release=Release(31))
    denied = configmap_check(configmap(EBS), release=Release(35))
    assert allowed is not None and allowed.allowed
    assert denied is not None and not denied.allowed
    assert "profiles[0].plugins.filter.enabled[0]" in (denied.message or "")


@pytest.mark.parametrize(
    ("configured", "cluster", "minor", "why"),
    [
        ("1.32", "v1.35.1", 32, "configured"),
        (None, "v1.33.4", 33, "cluster v1.33.4"),
        (None, "v1.29.0", 31, "nearest supported 1.31"),
        (None, "v1.40.0", 35, "nearest supported 1.35"),
        (None, None, 35, "default"),
        (None, "garbage", 35, "unreadable"),
    ],
)
def test_scheduler_release_resolution(
    configured: str | None, cluster: str | None, minor: int, why: str
) -> None:
    release, reason = scheduler_release(configured, {"StorageCapacityScoring": True}, cluster)
    assert release.minor == minor and why in reason
    assert release.enabled("StorageCapacityScoring")


async def test_server_version_reads_git_version_over_http(aiohttp_server: Any) -> None:
    async def version(_request: web.Request) -> web.Response:
        return web.json_response({"major": "1", "minor": "33", "gitVersion": "v1.33.2"})

    app = web.Application()
    app.router.add_get("/version", version)
    server = await aiohttp_server(app)
    configuration = Configuration()
    configuration.host = str(server.make_url("/")).rstrip("/")
    client = KubeClient(configuration)
    try:
        assert await client.server_version() == "v1.33.2"
    finally:
        await client.close()
