"""Helpers shared by the args kinds: the shape rule, resource-name findings, the out-of-tree messages.

Every rule runs on data that may already have schema errors: a wrong type is skipped, never a crash
(``fields.values``).
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.names import RESOURCE_NAME_HINT, is_valid_resource_name
from limitguard.core.paths import path_join

from ..fields.findings import Finding, invalid, required, warning
from ..fields.values import as_dict, as_int, as_list
from ..tables.readers import KOORD_SCHEDULER, Reader


def check_shape(shape: Any, path: str) -> list[Finding]:
    """validateFunctionShape: at least one point, utilization increasing (first offender only).

    Ranges (utilization 0..100, score 0..10) are in the schema.
    """
    points = as_list(shape)
    if not points:
        return [required(path, "at least one point must be specified", "shape.required")]
    previous: int | None = None
    for i, point in enumerate(points):
        utilization = as_int(as_dict(point).get("utilization"))
        if utilization is None:
            continue
        if previous is not None and utilization <= previous:
            return [
                invalid(
                    path_join(path, i, "utilization"),
                    utilization,
                    f"values must be sorted in strictly increasing order (previous point has {previous})",
                    "shape.increasing",
                )
            ]
        previous = utilization
    return []


#: validateFunctionShape's ranges (MaxCustomPriorityScore is 10).
SHAPE_RANGES: dict[str, tuple[int, int]] = {"utilization": (0, 100), "score": (0, 10)}


def check_shape_ranges(shape: Any, path: str) -> list[Finding]:
    """validateFunctionShape's per-point ranges, for args whose schema leaves them to the rules (a
    gated shape: with the gate off kube-scheduler reports the shape, never its points)."""
    findings: list[Finding] = []
    for i, point in enumerate(as_list(shape)):
        for name, (low, high) in SHAPE_RANGES.items():
            value = as_int(as_dict(point).get(name))
            if value is not None and not low <= value <= high:
                findings.append(
                    invalid(
                        path_join(path, i, name),
                        value,
                        f"not in valid range [{low}, {high}]",
                        f"shape.{name}-range",
                    )
                )
    return findings


def koord_starts(reader: Reader) -> str:
    """How a domain error under koord-scheduler begins, naming the build judged for: that binary does
    not refuse the value."""
    return f"{reader.scheduler_label(KOORD_SCHEDULER)} starts with it, but"


def resource_name_errors(
    name: Any, path: str, consequence: str = "", rule: str = "resources.valid-name"
) -> list[Finding]:
    """Out-of-tree args: real resource names only. ``consequence``: what the reading scheduler, which
    checks nothing, would do with the name."""
    if isinstance(name, str) and not is_valid_resource_name(name):
        detail = f"{RESOURCE_NAME_HINT}; {consequence}" if consequence else RESOURCE_NAME_HINT
        return [invalid(path, name, detail, rule)]
    return []


def resource_name_warnings(name: Any, path: str) -> list[Finding]:
    """In-tree args: kube-scheduler never checks these names, so a strange one is only a warning."""
    if isinstance(name, str) and not is_valid_resource_name(name):
        return [
            warning(
                path,
                f"{json.dumps(name)} is not a valid Kubernetes resource name ({RESOURCE_NAME_HINT}); "
                "kube-scheduler accepts it, but no node will report such a resource",
                "resources.valid-name",
                name,
            )
        ]
    return []


def replaced_zero(path: str, what: str, value: Any, default: Any) -> Finding:
    """Warning for an explicit zero kube-scheduler's defaulting replaces."""
    return warning(
        path,
        f"{what} {json.dumps(value)} is replaced by the default {json.dumps(default)} "
        "(kube-scheduler treats zero as unset)",
        "defaults.zero-replaced",
        value,
    )
