"""scheduler-plugins' defaulting, translated from its own table: what each args kind becomes before its
plugin reads it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.schedcfg.sigs_helpers import BY_KIND, MAIN, NEWEST, defaulted

METRICS_SERVER = {"metricProvider": {"type": "KubernetesMetricsServer"}}

# kubernetes-sigs/scheduler-plugins apis/config/v1/defaults_test.go @ v0.34.7, TestSchedulingDefaults
# (pointers written as plain values; a quantity as the string Go formats it to).
DEFAULTS_CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    (
        "empty config CoschedulingArgs",
        "CoschedulingArgs",
        {},
        {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 10},
    ),
    (
        "set non default CoschedulingArgs",
        "CoschedulingArgs",
        {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 20, "podGroupRejectPercentage": 50},
        {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 20, "podGroupRejectPercentage": 50},
    ),
    (
        "empty config NodeResourcesAllocatableArgs",
        "NodeResourcesAllocatableArgs",
        {},
        {"resources": [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}], "mode": "Least"},
    ),
    (
        "set non default NodeResourcesAllocatableArgs",
        "NodeResourcesAllocatableArgs",
        {"resources": [{"name": "cpu", "weight": 1 << 10}, {"name": "memory", "weight": 2}], "mode": "Most"},
        {"resources": [{"name": "cpu", "weight": 1 << 10}, {"name": "memory", "weight": 2}], "mode": "Most"},
    ),
    (
        "empty config TargetLoadPackingArgs",
        "TargetLoadPackingArgs",
        {},
        {
            **METRICS_SERVER,
            "defaultRequests": {"cpu": "1000m"},
            "defaultRequestsMultiplier": "1.5",
            "targetUtilization": 40,
        },
    ),
    (
        "set non default TargetLoadPackingArgs",
        "TargetLoadPackingArgs",
        {
            "watcherAddress": "http://localhost:2020",
            "defaultRequests": {"cpu": "100m"},
            "defaultRequestsMultiplier": "2.5",
            "targetUtilization": 50,
        },
        {
            "metricProvider": {},
            "watcherAddress": "http://localhost:2020",
            "defaultRequests": {"cpu": "100m"},
            "defaultRequestsMultiplier": "2.5",
            "targetUtilization": 50,
        },
    ),
    (
        "empty config LoadVariationRiskBalancingArgs",
        "LoadVariationRiskBalancingArgs",
        {},
        {**METRICS_SERVER, "safeVarianceMargin": 1.0, "safeVarianceSensitivity": 1.0},
    ),
    (
        "set non default LoadVariationRiskBalancingArgs",
        "LoadVariationRiskBalancingArgs",
        {"safeVarianceMargin": 2.0, "safeVarianceSensitivity": 2.0},
        {**METRICS_SERVER, "safeVarianceMargin": 2.0, "safeVarianceSensitivity": 2.0},
    ),
    (
        "empty config LowRiskOverCommitmentArgs",
        "LowRiskOverCommitmentArgs",
        {},
        {**METRICS_SERVER, "smoothingWindowSize": 5, "riskLimitWeights": {"cpu": 0.5, "memory": 0.5}},
    ),
    (
        "set non default LowRiskOverCommitmentArgs",
        "LowRiskOverCommitmentArgs",
        {"smoothingWindowSize": 10, "riskLimitWeights": {"cpu": 0.2, "memory": 0.8}},
        {**METRICS_SERVER, "smoothingWindowSize": 10, "riskLimitWeights": {"cpu": 0.2, "memory": 0.8}},
    ),
    (
        "set out of range LowRiskOverCommitmentArgs",
        "LowRiskOverCommitmentArgs",
        {"smoothingWindowSize": 10, "riskLimitWeights": {"cpu": -1, "memory": 2}},
        {**METRICS_SERVER, "smoothingWindowSize": 10, "riskLimitWeights": {"cpu": 0.5, "memory": 0.5}},
    ),
    (
        "empty config NodeResourceTopologyMatchArgs",
        "NodeResourceTopologyMatchArgs",
        {},
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            },
            "cache": {"foreignPodsDetect": "All", "resyncMethod": "Autodetect", "informerMode": "Dedicated"},
        },
    ),
    (
        "empty config PreeemptionTolerationArgs",
        "PreemptionTolerationArgs",
        {},
        {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    ),
    ("empty config TopologySortArgs", "TopologicalSortArgs", {}, {"namespaces": ["default"]}),
    (
        "set non default TopologySortArgs",
        "TopologicalSortArgs",
        {"namespaces": ["n1"]},
        {"namespaces": ["n1"]},
    ),
    (
        "empty config NetworkOverheadArgs",
        "NetworkOverheadArgs",
        {},
        {"namespaces": ["default"], "weightsName": "UserDefined", "networkTopologyName": "nt-default"},
    ),
    (
        "set non default NetworkOverheadArgs",
        "NetworkOverheadArgs",
        {"namespaces": ["n2"], "weightsName": "latency", "networkTopologyName": "nt-latency-costs"},
        {"namespaces": ["n2"], "weightsName": "latency", "networkTopologyName": "nt-latency-costs"},
    ),
    (
        "empty config SySchedArgs",
        "SySchedArgs",
        {},
        {"defaultProfileNamespace": "default", "defaultProfileName": "all-syscalls"},
    ),
    (
        "set non default SySchedArgs",
        "SySchedArgs",
        {"defaultProfileNamespace": "default", "defaultProfileName": "all-syscalls"},
        {"defaultProfileNamespace": "default", "defaultProfileName": "all-syscalls"},
    ),
]


@pytest.mark.parametrize(
    ("name", "kind", "args", "expected"), DEFAULTS_CASES, ids=[c[0] for c in DEFAULTS_CASES]
)
def test_defaults_table(name: str, kind: str, args: dict[str, Any], expected: dict[str, Any]) -> None:
    assert defaulted(kind, args, spec=NEWEST) == expected


V0_33_5 = "scheduler-plugins@v0.33.5"
#: The field v0.34.4-rc added, with its defaulting (SetDefaults_CoschedulingArgs): v0.33.5's
#: defaults_test.go is v0.34.7's without it, in the input and in the expectation.
REJECT_PERCENTAGE = "podGroupRejectPercentage"


def _without_reject_percentage(args: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in args.items() if name != REJECT_PERCENTAGE}


@pytest.mark.parametrize(
    ("name", "kind", "args", "expected"), DEFAULTS_CASES, ids=[c[0] for c in DEFAULTS_CASES]
)
def test_v0_33_5_defaults_table(name: str, kind: str, args: dict[str, Any], expected: dict[str, Any]) -> None:
    """apis/config/v1/defaults_test.go @ v0.33.5: CoschedulingArgs gets no podGroupRejectPercentage."""
    given, wanted = _without_reject_percentage(args), _without_reject_percentage(expected)
    assert defaulted(kind, given, spec=V0_33_5) == wanted
    if kind == "CoschedulingArgs":  # the one difference, asserted: v0.34.7 adds the default 10
        assert REJECT_PERCENTAGE in defaulted(kind, given, spec=NEWEST)
        assert REJECT_PERCENTAGE not in defaulted(kind, given, spec=V0_33_5)


@pytest.mark.parametrize(
    ("name", "kind", "args", "expected"), DEFAULTS_CASES, ids=[c[0] for c in DEFAULTS_CASES]
)
def test_main_defaults_table(name: str, kind: str, args: dict[str, Any], expected: dict[str, Any]) -> None:
    """apis/config/v1/defaults_test.go @ 903da7df keeps every v0.34.7 case; its NodeResourceTopologyMatchArgs
    expectations gain preemptionMode's default, Disabled (its own cases: test_sigs_unreleased.py)."""
    if kind == "NodeResourceTopologyMatchArgs":
        expected = {**expected, "preemptionMode": "Disabled"}
    assert defaulted(kind, args, spec=MAIN) == expected


def test_every_kind_with_a_defaulting_function_is_in_the_table() -> None:
    """PeaksArgs is the one registered kind without SetDefaults_ (defaults.go @ v0.34.7)."""
    covered = {case[1] for case in DEFAULTS_CASES}
    assert covered == set(BY_KIND) - {"PeaksArgs"}


def test_null_fields_are_defaulted_like_omitted_ones() -> None:
    """Go's decoder leaves a field nil for JSON null (a templated `permitWaitingTimeSeconds:` with no value),
    so SetDefaults_ fills it as if it were absent."""
    assert defaulted("CoschedulingArgs", {"permitWaitingTimeSeconds": None}) == defaulted(
        "CoschedulingArgs", {}
    )
    assert defaulted("NodeResourceTopologyMatchArgs", {"scoringStrategy": None, "cache": None}) == defaulted(
        "NodeResourceTopologyMatchArgs", {}
    )
