"""LimitAware args (limitguard's own scorer): weights and default ratios keyed by real resource names."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..report import Finding
from ..rules.releases import Release
from .common import as_dict, resource_name_errors
from .kind import ArgsKind


def validate(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
    findings: list[Finding] = []
    for field_name in ("scoringResourceWeights", "defaultLimitToAllocatableRatio"):
        for name in as_dict(args.get(field_name)):
            findings += resource_name_errors(str(name), path_join(path, field_name, str(name)))
    return findings


ARGS = ArgsKind("LimitAwareArgs", "LimitAware", validate, in_tree=False)
