"""Koordinator's defaulting, as koord-scheduler v1.8.0 applies it before the plugins' checks.

Source: koordinator-sh/koordinator v1.8.0 pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_<Kind>
and the default values above them). Koordinator has no defaults test table; each expectation below is
read from that file.
"""

from __future__ import annotations

import pytest

from tests.unit.schedcfg.koord_helpers import defaulted, run, warnings

NO_LIMIT = "1844674407370955161"  # math.MaxInt64 / 5

EMPTY_ARGS_DEFAULTS = {
    "LoadAwareSchedulingArgs": {
        "filterExpiredNodeMetrics": True,
        "enableScheduleWhenNodeMetricsExpired": False,
        "nodeMetricExpirationSeconds": 180,
        "resourceWeights": {"cpu": 1, "memory": 1},
        "usageThresholds": {"cpu": 65, "memory": 95},
        "estimatedScalingFactors": {"cpu": 85, "memory": 70},
    },
    "NodeNUMAResourceArgs": {
        "defaultCPUBindPolicy": "FullPCPUs",
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
        "numaScoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    },
    "ReservationArgs": {
        "enablePreemption": False,
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
        "controllerWorkers": 1,
        "gcDurationSeconds": 86400,
        "gcIntervalSeconds": 60,
        "resyncIntervalSeconds": 60,
    },
    "ElasticQuotaArgs": {
        "delayEvictTime": "2m0s",
        "revokePodInterval": "1s",
        "defaultQuotaGroupMax": {"cpu": NO_LIMIT, "memory": NO_LIMIT},
        "systemQuotaGroupMax": {"cpu": NO_LIMIT, "memory": NO_LIMIT},
        "quotaGroupNamespace": "koordinator-system",
        "monitorAllQuotas": False,
        "enableCheckParentQuota": False,
        "enableRuntimeQuota": True,
        "enableMinQuotaScale": True,
        "disableDefaultQuotaPreemption": True,
        "enableQueueHint": False,
        "quotaSnapshotUpdateInterval": "2m0s",
    },
    "CoschedulingArgs": {
        "defaultTimeout": "10m0s",
        "controllerWorkers": 1,
        "enablePreemption": False,
        "awareNetworkTopology": False,
        "defaultMatchPolicy": "once-satisfied",
    },
    "DeviceShareArgs": {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [
                {"name": "koordinator.sh/gpu-memory-ratio", "weight": 1},
                {"name": "koordinator.sh/gpu-memory", "weight": 1},
                {"name": "koordinator.sh/rdma", "weight": 1},
                {"name": "koordinator.sh/fpga", "weight": 1},
            ],
        },
        "gpuSharedResourceTemplatesConfig": {
            "configMapNamespace": "koordinator-system",
            "configMapName": "gpu-shared-resource-templates",
            "matchedResources": ["huawei.com/npu-core"],
        },
    },
    "SchedulingHintArgs": {"maxHintNodes": 100},
}


@pytest.mark.parametrize("kind", sorted(EMPTY_ARGS_DEFAULTS))
def test_empty_args_get_every_default_and_pass(kind: str) -> None:
    findings, out = run(kind, {})
    assert findings == []
    assert out == EMPTY_ARGS_DEFAULTS[kind]


#: The defaults v1.8.0's defaults.go added (git diff v1.7.0 v1.8.0 of that file), for fields v1.7.0's types
#: lack; main's defaults.go (a7a1b76b) is v1.8.0's.
ADDED_IN_V1_8 = {
    "ReservationArgs": ("gcIntervalSeconds", "resyncIntervalSeconds"),
    "ElasticQuotaArgs": ("enableQueueHint", "quotaSnapshotUpdateInterval"),
    "CoschedulingArgs": ("defaultMatchPolicy",),
}


@pytest.mark.parametrize("kind", sorted(set(EMPTY_ARGS_DEFAULTS) - {"SchedulingHintArgs"}))
def test_empty_args_defaults_per_build(kind: str) -> None:
    """v1.7.0 defaults what it has (SchedulingHintArgs is no kind there), main as v1.8.0 does."""
    expected = EMPTY_ARGS_DEFAULTS[kind]
    older = {name: value for name, value in expected.items() if name not in ADDED_IN_V1_8.get(kind, ())}
    assert run(kind, {}, "koord-scheduler@v1.7.0") == ([], older)
    assert run(kind, {}, "koord-scheduler@main") == ([], expected)
    if kind in ADDED_IN_V1_8:  # the difference is real, not an empty tuple
        assert older != expected


def test_loadaware_fills_missing_scaling_factors_but_keeps_given_ones() -> None:
    out = defaulted("LoadAwareSchedulingArgs", {"estimatedScalingFactors": {"cpu": 50, "nvidia.com/gpu": 90}})
    assert out["estimatedScalingFactors"] == {"cpu": 50, "nvidia.com/gpu": 90, "memory": 70}


def test_loadaware_weights_default_only_without_a_dominant_weight() -> None:
    assert defaulted("LoadAwareSchedulingArgs", {"dominantResourceWeight": 10}).get("resourceWeights") is None
    assert defaulted("LoadAwareSchedulingArgs", {"resourceWeights": {"cpu": 3}})["resourceWeights"] == {
        "cpu": 3
    }


def test_explicitly_empty_loadaware_maps_are_replaced_with_a_warning() -> None:
    """len(map) == 0 is unset to SetDefaults_LoadAwareSchedulingArgs: an operator who writes
    usageThresholds: {} to turn filtering off gets 65% / 95%."""
    out = defaulted("LoadAwareSchedulingArgs", {"usageThresholds": {}, "resourceWeights": {}})
    assert out["usageThresholds"] == {"cpu": 65, "memory": 95}
    assert out["resourceWeights"] == {"cpu": 1, "memory": 1}
    texts = warnings("LoadAwareSchedulingArgs", {"usageThresholds": {}, "resourceWeights": {}})
    assert [t.split(":")[0] for t in texts] == ["args.resourceWeights", "args.usageThresholds"]
    assert "a threshold of 0 turns one off" in texts[1]
    assert warnings("LoadAwareSchedulingArgs", {"usageThresholds": {"cpu": 0}}) == []


def test_reservation_zero_seconds_mean_the_default_but_pointers_keep_zero() -> None:
    """GCDurationSeconds & co. are int64 (0 is unset); the *int32 candidates keep an explicit 0."""
    out = defaulted(
        "ReservationArgs",
        {
            "gcDurationSeconds": 0,
            "gcIntervalSeconds": 5,
            "minCandidateNodesPercentage": 0,
            "controllerWorkers": 3,
        },
    )
    assert (out["gcDurationSeconds"], out["gcIntervalSeconds"]) == (86400, 5)
    assert (out["minCandidateNodesPercentage"], out["controllerWorkers"]) == (0, 3)


def test_elasticquota_empty_namespace_and_max_are_defaulted() -> None:
    out = defaulted("ElasticQuotaArgs", {"quotaGroupNamespace": "", "defaultQuotaGroupMax": {}})
    assert out["quotaGroupNamespace"] == "koordinator-system"
    assert out["defaultQuotaGroupMax"] == {"cpu": NO_LIMIT, "memory": NO_LIMIT}
    given = defaulted("ElasticQuotaArgs", {"systemQuotaGroupMax": {"cpu": "8"}})
    assert given["systemQuotaGroupMax"] == {"cpu": "8"}


def test_an_explicit_empty_bind_policy_is_kept() -> None:
    """*CPUBindPolicy: only nil is defaulted; "" leaves pods without a policy unbound and is valid."""
    assert defaulted("NodeNUMAResourceArgs", {"defaultCPUBindPolicy": ""})["defaultCPUBindPolicy"] == ""


@pytest.mark.parametrize("kind", sorted(EMPTY_ARGS_DEFAULTS))
def test_defaults_are_fresh_copies(kind: str) -> None:
    """Changing one defaulted args object (as a later rule or a caller might) leaves the next one alone."""
    first = defaulted(kind, {})
    for value in first.values():
        if isinstance(value, dict):
            value["changed"] = 1
            for item in value.get("resources", []):
                item["weight"] = 99
    assert defaulted(kind, {}) == EMPTY_ARGS_DEFAULTS[kind]
