"""ConfigMaps carrying a KubeSchedulerConfiguration: validated on CREATE/UPDATE (SPEC 6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limitguard.core.kubeversion import DEFAULT_MINOR, VersionError, clamped_minor
from limitguard.core.response import Response, allowed, warning
from limitguard.schedcfg import configmap_verdict
from limitguard.schedcfg.rules.gates import gate_problems
from limitguard.schedcfg.rules.releases import DEFAULT_RELEASE, Release

UNPROCESSABLE = 422
_MAX_WARNINGS = 10


def scheduler_release(
    configured: str | None, gates: Mapping[str, bool], cluster_version: str | None = None
) -> tuple[Release, str]:
    """The release ConfigMaps are validated for, and why: configured, else the cluster's /version, else
    the newest supported. A server keeps answering: a release outside the supported range is clamped to
    the nearest one, and gates that release refuses are left out; ``Release.note`` says so, and every
    verdict carries it as a warning."""
    notes: list[str] = []
    text = configured or cluster_version
    why = "configured" if configured else f"cluster {cluster_version}" if cluster_version else "default"
    minor = DEFAULT_MINOR
    if text:
        try:
            minor, clamp = clamped_minor(text)
        except VersionError:
            clamp = f"unreadable Kubernetes version {text!r}: applying the rules of 1.{DEFAULT_MINOR}"
            why = f"unreadable cluster version {text!r}"
        else:
            why += f", nearest supported 1.{minor}" if clamp else ""
        if clamp:
            notes.append(clamp)
    kept: dict[str, bool] = {}
    for gate, value in gates.items():
        problems = gate_problems({gate: value}, minor)
        if problems:
            notes.append(f"feature gate ignored: {problems[0]}")
        else:
            kept[gate] = value
    return Release(minor, kept, "; ".join(notes) or None), why


def configmap_check(configmap: Mapping[str, Any], release: Release = DEFAULT_RELEASE) -> Response | None:
    """None for ConfigMaps without a scheduler configuration (cheap); else the verdict."""
    report = configmap_verdict(dict(configmap), release)
    if report is None:
        return None
    notes = (warning(f"limitguard: {release.note}"),) if release.note else ()
    warnings = notes + tuple(warning(f"limitguard: {finding}") for finding in report.warnings[:_MAX_WARNINGS])
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
