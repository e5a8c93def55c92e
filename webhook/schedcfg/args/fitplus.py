"""koordinator's NodeResourcesFitPlus args (``NodeResourcesFitPlusArgs`` or the older ``ResourceTypesArgs``).

Out-of-tree: limitguard's extender scores with these args, so resource names must be real ones.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..report import Finding
from ..rules.releases import Release
from .common import as_dict, resource_name_errors
from .kind import ArgsKind


def validate(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
    findings: list[Finding] = []
    for name in as_dict(args.get("resources")):
        findings += resource_name_errors(str(name), path_join(path, "resources", str(name)))
    return findings


ARGS = ArgsKind("NodeResourcesFitPlusArgs", "NodeResourcesFitPlus", validate, in_tree=False)
LEGACY_ARGS = ArgsKind("ResourceTypesArgs", "NodeResourcesFitPlus", validate, in_tree=False)
