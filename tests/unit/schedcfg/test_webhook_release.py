"""The ConfigMap webhook validates for a configured release, else the cluster's /version (issue 15)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from kubernetes.client import Configuration

from limitguard.admission.configmaps import configmap_check, configmap_release
from limitguard.kube.client import KubeClient
from limitguard.schedcfg.tables.releases import Release

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
    ("configured", "cluster", "minor", "why", "note"),
    [
        ("1.32", "v1.35.1", 32, "configured", None),
        (None, "v1.33.4", 33, "cluster v1.33.4", None),
        (None, "v1.36.2", 36, "cluster v1.36.2", None),
        (None, "v1.29.0", 31, "nearest supported 1.31", "'v1.29.0' is outside the supported 1.31-1.37"),
        (None, "v1.40.0", 37, "nearest supported 1.37", "applying the rules of 1.37"),
        (None, None, 37, "default", None),
        (None, "garbage", 37, "unreadable", "unreadable Kubernetes version 'garbage'"),
    ],
)
def test_scheduler_release_resolution(
    configured: str | None, cluster: str | None, minor: int, why: str, note: str | None
) -> None:
    release, reason = configmap_release(configured, {"StorageCapacityScoring": True}, cluster)
    assert release.minor == minor and why in reason
    assert release.enabled("StorageCapacityScoring")
    assert (release.note is None) == (note is None)
    assert note is None or note in (release.note or "")


def test_a_clamped_release_warns_in_every_verdict() -> None:
    """A cluster newer than 1.37 is validated as 1.37, and each ConfigMap verdict says so."""
    release, _ = configmap_release(None, {}, "v1.38.0")
    allowed = configmap_check(configmap({**EBS, "profiles": [{}]}), release=release)
    denied = configmap_check(configmap(EBS), release=release)
    for response in (allowed, denied):
        assert response is not None
        assert any(
            "outside the supported 1.31-1.37: applying the rules of 1.37" in w for w in response.warnings
        )
    assert allowed is not None and allowed.allowed and denied is not None and not denied.allowed


def test_gates_the_release_refuses_are_left_out_with_a_warning() -> None:
    """GangScheduling is gone in 1.37 and DRAResourceClaimDeviceStatus is locked on: a server drops them."""
    release, _ = configmap_release("1.37", {"GangScheduling": True, "DRAResourceClaimDeviceStatus": False})
    assert dict(release.overrides) == {}
    assert "GangScheduling" in (release.note or "") and "locked to true" in (release.note or "")
    kept, _ = configmap_release("1.36", {"GangScheduling": True})
    assert dict(kept.overrides) == {"GangScheduling": True} and kept.note is None


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
