"""Koordinator's ScarceResourceAvoidance args: a list of resource names.

limitguard's extender reads them strictly (``ARGS``: real resource names, a repeat warned). koord-scheduler
v1.8 (``KOORD_ARGS``) decodes them strictly and checks nothing (no validation function; New in
scarceresourceavoidance/scarce_resource_avoidance.go:50 only asserts the type), so it starts with any name;
its Score (same file, :82-89) intersects the list with the resources a node has and the pod does not
request, so an invalid name never matches: an error here, saying so. A repeat changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, warning
from ..fields.values import as_list
from ..tables.readers import Reader
from .common import koord_starts, resource_name_errors
from .kind import ArgsKind


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[str] = set()
    for i, name in enumerate(as_list(args.get("resources"))):
        item_path = path_join(path, "resources", i)
        findings += resource_name_errors(name, item_path)
        if isinstance(name, str) and name in seen:
            findings.append(
                warning(
                    item_path, f"resource {json.dumps(name)} is listed twice", "resources.unique-name", name
                )
            )
        elif isinstance(name, str):
            seen.add(name)
    return findings


def koord_validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    for i, name in enumerate(as_list(args.get("resources"))):
        findings += resource_name_errors(
            name,
            path_join(path, "resources", i),
            f"{koord_starts(reader)} no node has such a resource, so ScarceResourceAvoidance never "
            "counts it as scarce",
            "scarce.resource-name",
        )
    return findings


ARGS = ArgsKind("ScarceResourceAvoidanceArgs", "ScarceResourceAvoidance", validate, in_tree=False)
KOORD_ARGS = ArgsKind(
    "ScarceResourceAvoidanceArgs",
    "ScarceResourceAvoidance",
    koord_validate,
    in_tree=False,
    schema_dir="args/koordinator",
)
