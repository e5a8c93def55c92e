"""koordinator's ScarceResourceAvoidance args: a list of real resource names (duplicates warned)."""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ..report import Finding, warning
from ..rules.releases import Release
from .common import as_list, resource_name_errors
from .kind import ArgsKind


def validate(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
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


ARGS = ArgsKind("ScarceResourceAvoidanceArgs", "ScarceResourceAvoidance", validate, in_tree=False)
