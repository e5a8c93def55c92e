"""LoadAwareSchedulingArgs (Koordinator v1.8.0: apis/config/v1 SetDefaults_LoadAwareSchedulingArgs,
apis/config/validation ValidateLoadAwareSchedulingArgs, called by plugins/loadaware New).

Koordinator names the expiry field ``nodeMetricExpiredSeconds`` in its error; findings use the field's
real name. Go reports one invalid entry per map (whichever its map order meets first); limitguard names
every invalid entry, which changes no verdict.
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, format_value, invalid, warning
from ...fields.values import as_dict
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import (
    SCHEMA_DIR,
    as_go_int,
    drop_nulls,
    duration_seconds,
    int_entries,
    koord_scheduler,
    replaced_empty,
)

DEFAULT_EXPIRATION_SECONDS = 180
DEFAULT_RESOURCE_WEIGHTS = {"cpu": 1, "memory": 1}
DEFAULT_USAGE_THRESHOLDS = {"cpu": 65, "memory": 95}
DEFAULT_SCALING_FACTORS = {"cpu": 85, "memory": 70}
#: apis/extension constants.go AggregationType values, in validateAggregationType's order.
AGGREGATION_TYPES = ("avg", "p50", "p90", "p95", "p99")
#: estimator/types.go Estimators: the only registered estimator; any other name falls back to it.
ESTIMATORS = ("defaultEstimator",)


def default(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    drop_nulls(args)
    drop_nulls(args.get("aggregated"))
    findings: list[Finding] = []
    args.setdefault("filterExpiredNodeMetrics", True)
    args.setdefault("enableScheduleWhenNodeMetricsExpired", False)
    args.setdefault("nodeMetricExpirationSeconds", DEFAULT_EXPIRATION_SECONDS)
    weights = args.get("resourceWeights")
    if not weights and not args.get("dominantResourceWeight"):
        if weights == {}:
            findings.append(
                replaced_empty(
                    path_join(path, "resourceWeights"),
                    DEFAULT_RESOURCE_WEIGHTS,
                    "set dominantResourceWeight to score by the dominant resource alone",
                    reader,
                )
            )
        args["resourceWeights"] = dict(DEFAULT_RESOURCE_WEIGHTS)
    thresholds = args.get("usageThresholds")
    if not thresholds:
        if thresholds == {}:
            findings.append(
                replaced_empty(
                    path_join(path, "usageThresholds"),
                    DEFAULT_USAGE_THRESHOLDS,
                    "nodes above 65% CPU or 95% memory usage are filtered out; a threshold of 0 turns one off",
                    reader,
                )
            )
        args["usageThresholds"] = dict(DEFAULT_USAGE_THRESHOLDS)
    factors = args.get("estimatedScalingFactors")
    if isinstance(factors, dict):
        for name, value in DEFAULT_SCALING_FACTORS.items():
            factors.setdefault(name, value)
    elif "estimatedScalingFactors" not in args:
        args["estimatedScalingFactors"] = dict(DEFAULT_SCALING_FACTORS)
    return findings


def _range_errors(
    value: Any, path: str, what: str, low_open: bool, rule: str, bits: int = 64
) -> list[Finding]:
    """validateResourceWeights / validateResourceThresholds / validateEstimatedScalingFactors: each
    entry in [0, 100] or (0, 100]."""
    findings = []
    for name, number in int_entries(value, bits):
        if number < 0 or (low_open and number == 0):
            detail = f"{what} of {name} should be a positive value, got {number}"
        elif number > 100:
            detail = f"{what} of {name} should be less than 100, got {number}"
        else:
            continue
        findings.append(invalid(path_join(path, name), number, detail, rule))
    return findings


def _aggregated(aggregated: Any, path: str) -> list[Finding]:
    """validateAggregatedArgs."""
    if not isinstance(aggregated, dict):
        return []
    findings = _range_errors(
        aggregated.get("usageThresholds"),
        path_join(path, "usageThresholds"),
        "resource Threshold",
        False,
        "koord.loadaware.threshold",
    )
    for prefix in ("usage", "score"):
        kind = aggregated.get(f"{prefix}AggregationType")
        if isinstance(kind, str) and kind and kind not in AGGREGATION_TYPES:
            listed = ", ".join(json.dumps(t) for t in AGGREGATION_TYPES)
            findings.append(
                invalid(
                    path_join(path, f"{prefix}AggregationType"),
                    kind,
                    f"supported values: {listed}",
                    "koord.loadaware.aggregation-type",
                )
            )
        duration = duration_seconds(aggregated.get(f"{prefix}AggregatedDuration"))
        if duration is not None and duration < 0:
            findings.append(
                invalid(
                    path_join(path, f"{prefix}AggregatedDuration"),
                    aggregated[f"{prefix}AggregatedDuration"],
                    "duration must be >= 0",
                    "koord.loadaware.aggregated-duration",
                )
            )
    return findings


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    expiration = as_go_int(args.get("nodeMetricExpirationSeconds"))
    if expiration is not None and expiration <= 0:
        findings.append(
            invalid(
                path_join(path, "nodeMetricExpirationSeconds"),
                expiration,
                "nodeMetricExpiredSeconds should be a positive value",
                "koord.loadaware.expiration",
            )
        )
    findings += _range_errors(
        args.get("resourceWeights"),
        path_join(path, "resourceWeights"),
        "resource Weight",
        True,
        "koord.loadaware.weight",
    )
    dominant = as_go_int(args.get("dominantResourceWeight"))
    if dominant is not None and not 0 <= dominant <= 100:
        detail = "should not be a negative value" if dominant < 0 else "should be less than 100"
        findings.append(
            invalid(
                path_join(path, "dominantResourceWeight"),
                dominant,
                f"dominantResourceWeight {detail}",
                "koord.loadaware.dominant-weight",
            )
        )
    findings += _range_errors(
        args.get("usageThresholds"),
        path_join(path, "usageThresholds"),
        "resource Threshold",
        False,
        "koord.loadaware.threshold",
    )
    findings += _range_errors(
        args.get("estimatedScalingFactors"),
        path_join(path, "estimatedScalingFactors"),
        "estimated resource ScalingFactor",
        True,
        "koord.loadaware.scaling-factor",
    )
    factors = as_dict(args.get("estimatedScalingFactors"))
    missing = sorted(str(name) for name in as_dict(args.get("resourceWeights")) if name not in factors)
    if missing:  # Go stops at the first one its map order meets
        findings.append(
            Finding(
                "error",
                path_join(path, "estimatedScalingFactors"),
                f"Not found: {format_value(missing[0])} (every resource in resourceWeights needs an estimated "
                "scaling factor)",
                "koord.loadaware.scaling-factor-missing",
                missing[0],
            )
        )
    findings += _aggregated(args.get("aggregated"), path_join(path, "aggregated"))
    findings += _surprises(args, path, reader)
    return findings


def _surprises(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """Values koord-scheduler starts with but acts on differently than written."""
    findings: list[Finding] = []
    estimator = args.get("estimator")
    if isinstance(estimator, str) and estimator and estimator not in ESTIMATORS:
        findings.append(
            warning(
                path_join(path, "estimator"),
                f"{json.dumps(estimator)} is not a registered estimator: {koord_scheduler(reader)} starts "
                f"and estimates with {json.dumps(ESTIMATORS[0])}",
                "koord.loadaware.estimator",
                estimator,
            )
        )
    for name, number in int_entries(args.get("prodUsageThresholds")):
        if not 0 <= number <= 100:
            findings.append(
                warning(
                    path_join(path, "prodUsageThresholds", name),
                    f"{number} is a percentage outside 0-100 that {koord_scheduler(reader)} does not check: "
                    + (
                        "it trips only when the estimated usage exceeds the node's allocatable"
                        if number > 100
                        else "prod pods are filtered out of every node that reports its usage"
                    ),
                    "koord.loadaware.prod-threshold",
                    number,
                )
            )
    return findings


ARGS = ArgsKind(
    "LoadAwareSchedulingArgs", "LoadAwareScheduling", validate, default, in_tree=False, schema_dir=SCHEMA_DIR
)
