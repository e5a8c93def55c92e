"""DefaultPreemptionArgs: percentage and absolute minimum of candidates, not both zero (ranges: schema)."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, invalid
from ..fields.values import as_int
from ..tables.readers import Reader
from .kind import ArgsKind


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    args.setdefault("minCandidateNodesPercentage", 10)
    args.setdefault("minCandidateNodesAbsolute", 100)
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    percentage = as_int(args.get("minCandidateNodesPercentage"))
    absolute = as_int(args.get("minCandidateNodesAbsolute"))
    if percentage == 0 and absolute == 0:
        return [
            invalid(
                path_join(path, "minCandidateNodesPercentage"),
                0,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
                "preemption.not-both-zero",
            ),
            invalid(
                path_join(path, "minCandidateNodesAbsolute"),
                0,
                "cannot be zero at the same time as minCandidateNodesPercentage",
                "preemption.not-both-zero",
            ),
        ]
    return []


ARGS = ArgsKind("DefaultPreemptionArgs", "DefaultPreemption", validate, default)
