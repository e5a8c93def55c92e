"""LowRiskOverCommitmentArgs of scheduler-plugins (apis/config/v1 SetDefaults_LowRiskOverCommitmentArgs,
pkg/trimaran/lowriskovercommitment computeRank: only cpu and memory risks are computed; tag v0.34.7)."""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, warning
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls, is_number, replaced
from .trimaran import check_spec, default_spec

DEFAULT_WINDOW = 5
DEFAULT_WEIGHT = 0.5
SCORED = ("cpu", "memory")


def default(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    drop_nulls(args)
    findings = default_spec(args, path)
    window = as_go_int(args.get("smoothingWindowSize"))
    if "smoothingWindowSize" not in args:
        args["smoothingWindowSize"] = DEFAULT_WINDOW
    elif window is not None and window <= 0:
        findings.append(
            replaced(
                path_join(path, "smoothingWindowSize"),
                window,
                DEFAULT_WINDOW,
                "a window must be above 0",
                reader,
            )
        )
        args["smoothingWindowSize"] = DEFAULT_WINDOW
    weights = args.get("riskLimitWeights")
    if weights in (None, {}):
        args["riskLimitWeights"] = {name: DEFAULT_WEIGHT for name in SCORED}
    elif isinstance(weights, dict):
        for name, weight in weights.items():
            if is_number(weight) and not 0 <= weight <= 1:
                findings.append(
                    replaced(
                        path_join(path, "riskLimitWeights", str(name)),
                        weight,
                        DEFAULT_WEIGHT,
                        "a weight must be in [0, 1]",
                        reader,
                    )
                )
                weights[name] = DEFAULT_WEIGHT
    return findings


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings = check_spec(args, path, reader)
    weights = args.get("riskLimitWeights")
    if isinstance(weights, dict):
        for name in weights:
            if name not in SCORED:
                findings.append(
                    warning(
                        path_join(path, "riskLimitWeights", str(name)),
                        f"ignored: the plugin computes the risk of cpu and memory only, never of {json.dumps(name)}",
                        "sigs.lowrisk.resource",
                        name,
                    )
                )
    return findings


ARGS = ArgsKind(
    "LowRiskOverCommitmentArgs",
    "LowRiskOverCommitment",
    validate,
    default,
    in_tree=False,
    schema_dir=SCHEMA_DIR,
)
