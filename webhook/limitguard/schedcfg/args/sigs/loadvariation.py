"""LoadVariationRiskBalancingArgs of scheduler-plugins (apis/config/v1
SetDefaults_LoadVariationRiskBalancingArgs, pkg/trimaran/loadvariationriskbalancing/analysis.go computeScore;
tag v0.34.7)."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, warning
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, drop_nulls, is_number, replaced
from .trimaran import check_spec, default_spec

FIELDS = ("safeVarianceMargin", "safeVarianceSensitivity")


def default(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    drop_nulls(args)
    findings = default_spec(args, path)
    for name in FIELDS:
        value = args.get(name)
        if name not in args:
            args[name] = 1.0
        elif is_number(value) and value < 0:
            findings.append(replaced(path_join(path, name), value, 1.0, "a negative value is unset", reader))
            args[name] = 1.0
    return findings


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings = check_spec(args, path, reader)
    sensitivity = args.get("safeVarianceSensitivity")
    if is_number(sensitivity) and sensitivity == 0:
        findings.append(
            warning(
                path_join(path, "safeVarianceSensitivity"),
                "0 makes the root power 1/0: the deviation term vanishes (unless it is 1), so nodes are "
                "scored on their average load alone",
                "sigs.loadvariation.sensitivity",
                sensitivity,
            )
        )
    return findings


ARGS = ArgsKind(
    "LoadVariationRiskBalancingArgs",
    "LoadVariationRiskBalancing",
    validate,
    default,
    in_tree=False,
    schema_dir=SCHEMA_DIR,
)
