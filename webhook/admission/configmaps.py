"""ConfigMaps carrying a KubeSchedulerConfiguration: validated on CREATE/UPDATE (SPEC 6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limitguard.core.response import Response, allowed, warning
from limitguard.schedcfg import configmap_verdict

UNPROCESSABLE = 422
_MAX_WARNINGS = 10


def configmap_check(configmap: Mapping[str, Any]) -> Response | None:
    """None for ConfigMaps without a scheduler configuration (cheap); else the verdict."""
    report = configmap_verdict(dict(configmap))
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
    return Response(
        False, "invalid-scheduler-config", UNPROCESSABLE, message, warnings, action="deny"
    )
