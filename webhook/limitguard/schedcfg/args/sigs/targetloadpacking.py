"""TargetLoadPackingArgs of scheduler-plugins (apis/config/v1 SetDefaults_TargetLoadPackingArgs; the
constructor in pkg/trimaran/targetloadpacking parses defaultRequestsMultiplier; tag v0.34.7)."""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join
from limitguard.core.quantity import QuantityError, parse_quantity

from ...fields.findings import Finding, invalid, warning
from ...fields.values import as_dict
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls, replaced
from .trimaran import check_spec, default_spec, parses_as_go_float

DEFAULT_TARGET = 40


def default(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    drop_nulls(args)
    findings = default_spec(args, path)
    args.setdefault("defaultRequests", {"cpu": "1000m"})
    args.setdefault("defaultRequestsMultiplier", "1.5")
    target = as_go_int(args.get("targetUtilization"))
    if "targetUtilization" not in args:
        args["targetUtilization"] = DEFAULT_TARGET
    elif target is not None and target <= 0:
        findings.append(
            replaced(
                path_join(path, "targetUtilization"),
                target,
                DEFAULT_TARGET,
                "a target must be above 0",
                reader,
            )
        )
        args["targetUtilization"] = DEFAULT_TARGET
    return findings


def _zero_cpu(value: Any) -> bool:
    """DefaultRequests.Cpu() is zero: cpu absent, null or a zero quantity (a bad one is a schema error)."""
    try:
        return value is None or parse_quantity(value) == 0
    except QuantityError:
        return False


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings = check_spec(args, path, reader)
    multiplier = args.get("defaultRequestsMultiplier")
    if isinstance(multiplier, str) and not parses_as_go_float(multiplier):
        findings.append(
            invalid(
                path_join(path, "defaultRequestsMultiplier"),
                multiplier,
                "unable to parse DefaultRequestsMultiplier: not a floating-point number",
                "sigs.targetloadpacking.multiplier",
            )
        )
    target = as_go_int(args.get("targetUtilization"))
    if target is not None and target > 100:
        findings.append(
            warning(
                path_join(path, "targetUtilization"),
                f"above 100: a lightly loaded node scores up to {target}, outside the framework's 0-100, and the "
                "scheduling cycle of every pod then fails with an invalid-score error",
                "sigs.targetloadpacking.target",
                target,
            )
        )
    requests = args.get("defaultRequests")
    if isinstance(requests, dict):
        requests_path = path_join(path, "defaultRequests")
        if _zero_cpu(requests.get("cpu")):
            findings.append(
                warning(
                    requests_path,
                    "gives no cpu: best-effort pods are predicted to use no CPU (the default 1 cpu applies only "
                    "when defaultRequests is omitted)",
                    "sigs.targetloadpacking.default-requests",
                )
            )
        for name in sorted(set(as_dict(requests)) - {"cpu"}):
            findings.append(
                warning(
                    path_join(requests_path, name),
                    f"ignored: the plugin predicts CPU only, {json.dumps(name)} is never read",
                    "sigs.targetloadpacking.default-requests",
                )
            )
    return findings


ARGS = ArgsKind(
    "TargetLoadPackingArgs", "TargetLoadPacking", validate, default, in_tree=False, schema_dir=SCHEMA_DIR
)
