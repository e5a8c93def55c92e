"""NodeResourcesBalancedAllocationArgs: unique names, every weight 1 after defaulting (0 -> 1)."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, duplicate, invalid
from ..fields.values import as_dict, as_int, as_list
from ..tables.readers import Reader
from .common import resource_name_warnings
from .fit import default_resources, default_weights
from .kind import ArgsKind


def default(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    if not as_list(args.get("resources")):
        if "resources" not in args or args["resources"] in (None, []):
            args["resources"] = default_resources()
        return []
    return default_weights(args["resources"], path_join(path, "resources"))


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[str] = set()
    for i, resource in enumerate(as_list(args.get("resources"))):
        resource = as_dict(resource)
        item = path_join(path, "resources", i)
        name = resource.get("name")
        findings += resource_name_warnings(name, path_join(item, "name"))
        if isinstance(name, str):
            if name in seen:
                findings.append(duplicate(path_join(item, "name"), name, "resources.unique-name"))
            seen.add(name)
        weight = as_int(resource.get("weight"))
        if weight is not None and weight != 1:
            findings.append(invalid(path_join(item, "weight"), weight, "must be 1", "balanced.weight"))
    return findings


ARGS = ArgsKind("NodeResourcesBalancedAllocationArgs", "NodeResourcesBalancedAllocation", validate, default)
