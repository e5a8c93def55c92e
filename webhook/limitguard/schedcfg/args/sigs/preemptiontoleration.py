"""PreemptionTolerationArgs of scheduler-plugins: kube-scheduler's DefaultPreemptionArgs under another kind
(apis/config/v1 types.go, SetDefaults_PreemptionTolerationArgs; pkg/preemptiontoleration New runs
kube-scheduler's ValidateDefaultPreemptionArgs; tag v0.34.7).

The in-tree kind's defaulting and not-both-zero rule are reused; its ranges, which the in-tree schema
carries, are checked here because this plugin checks them only when it starts (the schema keeps to what
decoding refuses).
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid
from ...tables.readers import Reader
from .. import preemption
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls

RANGES = {"minCandidateNodesPercentage": (0, 100), "minCandidateNodesAbsolute": (0, None)}


def default(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    drop_nulls(args)
    return preemption.default(args, path, reader)


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    for name, (low, high) in RANGES.items():
        value = as_go_int(args.get(name), 32)
        if value is None:
            continue
        if high is not None and not low <= value <= high:
            findings.append(
                invalid(
                    path_join(path, name), value, f"not in valid range [{low}, {high}]", "sigs.preemption"
                )
            )
        elif value < low:
            findings.append(
                invalid(path_join(path, name), value, "not in valid range [0, inf)", "sigs.preemption")
            )
    return findings + preemption.validate(args, path, reader)


ARGS = ArgsKind(
    "PreemptionTolerationArgs",
    "PreemptionToleration",
    validate,
    default,
    in_tree=False,
    schema_dir=SCHEMA_DIR,
)
