"""ConfigMaps carrying a KubeSchedulerConfiguration: validated on CREATE/UPDATE (SPEC 6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limitguard.core.response import Response, allowed, warning
from limitguard.schedcfg import configmap_verdict
from limitguard.schedcfg.rules.releases import (
    DEFAULT_RELEASE,
    SUPPORTED_MINORS,
    Release,
    ReleaseError,
    release_for,
)

UNPROCESSABLE = 422
_MAX_WARNINGS = 10


def scheduler_release(
    configured: str | None, gates: Mapping[str, bool], cluster_version: str | None = None
) -> tuple[Release, str]:
    """The release ConfigMaps are validated for, and why: configured, else the cluster's /version
    (clamped to the supported range), else the newest supported."""
    if configured:
        return release_for(configured, gates), "configured"
    if cluster_version:
        try:
            return release_for(cluster_version, gates), f"cluster {cluster_version}"
        except ReleaseError:
            try:
                minor = int(cluster_version.lstrip("v").split(".")[1])
            except (IndexError, ValueError):
                return Release(
                    DEFAULT_RELEASE.minor, dict(gates)
                ), f"unreadable cluster version {cluster_version!r}"
            nearest = min(max(minor, SUPPORTED_MINORS[0]), SUPPORTED_MINORS[-1])
            return Release(nearest, dict(gates)), f"cluster {cluster_version}, nearest supported 1.{nearest}"
    return Release(DEFAULT_RELEASE.minor, dict(gates)), "default"


def configmap_check(configmap: Mapping[str, Any], release: Release = DEFAULT_RELEASE) -> Response | None:
    """None for ConfigMaps without a scheduler configuration (cheap); else the verdict."""
    report = configmap_verdict(dict(configmap), release)
    if report is None:
        return None
    warnings = tuple(warning(f"limitguard: {finding}") for finding in report.warnings[:_MAX_WARNINGS])
    if report.ok:
        return allowed("valid-scheduler-config", *warnings)
    metadata = configmap.get("metadata") if isinstance(configmap.get("metadata"), Mapping) else {}
    name = metadata.get("name", "")
    errors = "\n".join(f"* {finding}" for finding in report.errors)
    message = (
        f'ConfigMap "{name}" is invalid: its KubeSchedulerConfiguration has {len(report.errors)} '
        f"error(s):\n{errors}"
    )
    return Response(False, "invalid-scheduler-config", UNPROCESSABLE, message, warnings, action="deny")
