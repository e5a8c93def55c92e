"""NodeResourcesAllocatableArgs of scheduler-plugins (apis/config/v1 SetDefaults_NodeResourcesAllocatableArgs,
apis/config/validation ValidateNodeResourcesAllocatableArgs, called by pkg/noderesources NewAllocatable;
tag v0.34.7).

Unlike the in-tree NodeResourcesFit, a weight is never defaulted: an omitted or 0 weight refuses start-up.
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...fields.values import as_dict, as_list
from ...tables.readers import Reader
from ..common import resource_name_warnings
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls

MODES = ("Least", "Most")
#: A millicore weighs as much as a MiB (defaults.go defaultNodeResourcesAllocatableResourcesToWeightMap).
DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1})


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    if isinstance(args.get("resources"), list):  # a null item decodes as an empty ResourceSpec
        args["resources"] = [{} if r is None else r for r in args["resources"]]
    for resource in as_list(args.get("resources")):
        drop_nulls(resource)
    if args.get("resources") in (None, []):
        args["resources"] = [dict(r) for r in DEFAULT_RESOURCES]
    if args.get("mode", "") == "":
        args["mode"] = "Least"
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    resources_path = path_join(path, "resources")
    seen: set[str] = set()
    for i, resource in enumerate(as_list(args.get("resources"))):
        resource = as_dict(resource)
        name = resource.get("name", "")
        weight = as_go_int(resource.get("weight", 0))
        if weight is not None and weight <= 0:
            findings.append(
                invalid(
                    path_join(resources_path, i, "weight"),
                    weight,
                    f"resource weight of {name} should be a positive value",
                    "sigs.allocatable.weight",
                )
            )
        findings += resource_name_warnings(name, path_join(resources_path, i, "name"))
        if isinstance(name, str) and name in seen:
            findings.append(
                warning(
                    path_join(resources_path, i, "name"),
                    f"{json.dumps(name)} is listed twice: the plugin keeps the last weight only",
                    "sigs.allocatable.duplicate",
                    name,
                )
            )
        if isinstance(name, str):
            seen.add(name)
    mode = args.get("mode")
    if isinstance(mode, str) and mode not in MODES:
        findings.append(
            invalid(path_join(path, "mode"), mode, "invalid support ModeType", "sigs.allocatable.mode")
        )
    return findings


ARGS = ArgsKind(
    "NodeResourcesAllocatableArgs",
    "NodeResourcesAllocatable",
    validate,
    default,
    in_tree=False,
    schema_dir=SCHEMA_DIR,
)
