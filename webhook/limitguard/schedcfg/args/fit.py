"""NodeResourcesFitArgs (validation_pluginargs.go ValidateNodeResourcesFitArgs, defaults.go).

The requestedToCapacityRatio rules changed in 1.36 (kubernetes PR #132120): see ``_check_ratio``.

kube-scheduler checks these args when the plugin starts, not when the file loads; the verdict is the same
(it does not start). Resource names are never checked by kube-scheduler: a strange one is a warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from limitguard.core.names import is_qualified_name
from limitguard.core.paths import path_join

from ..fields.findings import Finding, forbidden, invalid, required, warning
from ..fields.values import as_dict, as_int, as_list
from ..tables.readers import Reader
from .common import check_shape, replaced_zero, resource_name_warnings
from .kind import ArgsKind

DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})


def default_resources() -> list[dict[str, Any]]:
    return [dict(r) for r in DEFAULT_RESOURCES]


def default_weights(resources: list[Any], path: str) -> list[Finding]:
    """Weight omitted or 0 -> 1 (an explicit 0 is reported: it does not disable the resource)."""
    findings: list[Finding] = []
    for i, resource in enumerate(resources):
        if not isinstance(resource, dict):
            continue
        if "weight" not in resource or resource["weight"] is None:
            resource["weight"] = 1
        elif as_int(resource["weight"]) == 0:
            findings.append(replaced_zero(path_join(path, i, "weight"), "weight", 0, 1))
            resource["weight"] = 1
    return findings


def default(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    strategy = args.get("scoringStrategy")
    if strategy is None:
        args["scoringStrategy"] = {"type": "LeastAllocated", "resources": default_resources()}
        return []
    if not isinstance(strategy, dict):
        return []
    if not as_list(strategy.get("resources")):
        strategy["resources"] = default_resources()
        return []
    return default_weights(strategy["resources"], path_join(path, "scoringStrategy", "resources"))


def check_ignored(
    args: dict[str, Any],
    path: str,
    *,
    resource_ok: Callable[[str], bool] = is_qualified_name,
    resource_detail: str = "must be a qualified name (e.g. example.com/foo)",
    group_ok: Callable[[str], bool] = is_qualified_name,
    group_detail: str = "must be a qualified name (e.g. example.com)",
    rules: tuple[str, str] = ("fit.ignored-resources", "fit.ignored-resource-groups"),
) -> list[Finding]:
    """ignoredResources and ignoredResourceGroups, each entry at its index; a group never holds a ``/``.
    Koordinator's ReservationArgs checks its fields of these names "the same way" with its own predicates."""
    findings: list[Finding] = []
    for i, name in enumerate(as_list(args.get("ignoredResources"))):
        if isinstance(name, str) and not resource_ok(name):
            findings.append(invalid(path_join(path, "ignoredResources", i), name, resource_detail, rules[0]))
    for i, group in enumerate(as_list(args.get("ignoredResourceGroups"))):
        if not isinstance(group, str):
            continue
        group_path = path_join(path, "ignoredResourceGroups", i)
        if "/" in group:
            findings.append(invalid(group_path, group, "resource group name can't contain '/'", rules[1]))
        elif not group_ok(group):
            findings.append(invalid(group_path, group, group_detail, rules[1]))
    return findings


def check_weights(resources: list[Any], path: str) -> list[Finding]:
    """validateResources: every weight in (0, 100] after defaulting; names only warned about."""
    findings: list[Finding] = []
    for i, resource in enumerate(resources):
        resource = as_dict(resource)
        findings += resource_name_warnings(resource.get("name"), path_join(path, i, "name"))
        weight = as_int(resource.get("weight"))
        if weight is not None and not 0 < weight <= 100:
            findings.append(
                invalid(
                    path_join(path, i, "weight"),
                    weight,
                    f"resource weight of {json.dumps(resource.get('name'))} not in valid range (0, 100]",
                    "fit.resource-weight",
                )
            )
    return findings


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings = check_ignored(args, path)
    strategy_path = path_join(path, "scoringStrategy")
    strategy = args.get("scoringStrategy")
    if not isinstance(strategy, dict):
        return findings
    kind = strategy.get("type")  # unsupported or missing types are schema findings
    findings += check_weights(as_list(strategy.get("resources")), path_join(strategy_path, "resources"))
    findings += _check_ratio(strategy, kind, strategy_path, reader)
    return findings


def _check_ratio(strategy: dict[str, Any], kind: Any, strategy_path: str, reader: Reader) -> list[Finding]:
    """requestedToCapacityRatio against the type. From 1.36 validation requires it for type
    RequestedToCapacityRatio and forbids it otherwise; before, validation only checked a given shape, a
    missing block crashed the plugin at start-up and an extra one was ignored."""
    ratio = strategy.get("requestedToCapacityRatio")
    ratio_path = path_join(strategy_path, "requestedToCapacityRatio")
    checks_type = reader.release.has("fit.ratio-required-forbidden")
    findings: list[Finding] = []
    if kind == "RequestedToCapacityRatio" and ratio is None:
        detail = "must be specified when type is RequestedToCapacityRatio"
        if not checks_type:
            detail += (
                f" (kube-scheduler {reader.release.name}'s validation lets it pass, then the NodeResourcesFit "
                "plugin panics when it starts)"
            )
        return [required(ratio_path, detail, "fit.ratio")]
    if ratio is None or not isinstance(kind, str):
        return findings
    if kind != "RequestedToCapacityRatio":
        if checks_type:
            return [
                forbidden(ratio_path, "must be nil when type is not RequestedToCapacityRatio", "fit.ratio")
            ]
        findings.append(
            warning(
                ratio_path,
                f"ignored: type is {kind}, not RequestedToCapacityRatio (kube-scheduler 1.36 and later "
                "refuse it)",
                "fit.ratio",
                kind,
            )
        )
    if isinstance(ratio, dict) and "shape" in ratio:
        findings += check_shape(ratio.get("shape"), path_join(ratio_path, "shape"))
    return findings


ARGS = ArgsKind("NodeResourcesFitArgs", "NodeResourcesFit", validate, default)
