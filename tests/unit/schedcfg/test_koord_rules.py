"""What koord-scheduler v1.8.0's plugin constructors refuse beyond the validation package, and what they
accept but act on differently than written (warnings that say the consequence).

Sources, all koordinator-sh/koordinator at tag v1.8.0: plugins/nodenumaresource/plugin.go NewWithOptions
and scoring.go resourceStrategyTypeMap; plugins/deviceshare/plugin.go New and scoring.go;
plugins/elasticquota/plugin.go New and core/hook_plugin.go initHookPlugins; plugins/loadaware/
estimator/types.go NewEstimator and load_aware.go filterNodeUsage; plugins/coscheduling/core/gang.go;
plugins/reservation/controller/controller.go NewController and preemption.go getPreemptionArgs;
plugins/elasticquota/quota_overuse_revoke.go Start.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.schedcfg.koord_helpers import errors, run, warnings

SUPPORTED = '(supported: "LeastAllocated", "MostAllocated")'


@pytest.mark.parametrize(
    ("kind", "field", "what"),
    [
        ("NodeNUMAResourceArgs", "scoringStrategy", "scoring strategy"),
        ("NodeNUMAResourceArgs", "numaScoringStrategy", "numa scoring strategy"),
        ("DeviceShareArgs", "scoringStrategy", "scoring strategy"),
    ],
)
def test_a_strategy_type_without_a_scorer_stops_the_start(kind: str, field: str, what: str) -> None:
    """BalancedAllocation is a declared ScoringStrategyType, but neither plugin has a scorer for it."""
    assert errors(kind, {field: {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}) == []
    assert errors(kind, {field: {"type": "BalancedAllocation"}}) == [
        f'args.{field}.type: Invalid value: "BalancedAllocation": {what} BalancedAllocation is not supported '
        f"{SUPPORTED}"
    ]
    assert errors(kind, {field: {}}) == [
        f'args.{field}.type: Invalid value: "": {what}  is not supported {SUPPORTED}'
    ]


def test_numa_refuses_pod_level_bind_policies_as_the_default() -> None:
    """apis/extension names Default and ConstrainedBurst too; ValidateNodeNUMAResourceArgs takes neither."""
    for policy in ("Default", "ConstrainedBurst", "fullpcpus"):
        assert errors("NodeNUMAResourceArgs", {"defaultCPUBindPolicy": policy}) == [
            f'args.defaultCPUBindPolicy: Invalid value: "{policy}": must specified CPU bind policy FullPCPUs or '
            "SpreadByPCPUs"
        ]


@pytest.mark.parametrize(
    ("hook", "where", "message"),
    [
        ({}, "key", "failed to initialize index-0 hook plugin: key is empty"),
        ({"key": "limit"}, "factoryKey", "failed to initialize hook plugin limit: factory key is empty"),
        (
            {"key": "limit", "factoryKey": "quota-limiter", "factoryArgs": "{}"},
            "factoryKey",
            "failed to initialize hook plugin limit: factory quota-limiter not found (koord-scheduler v1.8.0 "
            "registers no hook plugin factory; only a build that adds one can use hookPlugins)",
        ),
    ],
)
def test_any_hook_plugin_stops_a_v1_8_scheduler(hook: dict[str, Any], where: str, message: str) -> None:
    found = errors("ElasticQuotaArgs", {"hookPlugins": [hook]})
    assert len(found) == 1
    assert found[0].startswith(f"args.hookPlugins[0].{where}: Invalid value: ")
    assert found[0].endswith(message)
    assert errors("ElasticQuotaArgs", {"hookPlugins": []}) == []


def test_an_unknown_estimator_falls_back_to_the_default_one() -> None:
    assert warnings("LoadAwareSchedulingArgs", {"estimator": "defaultEstimator"}) == []
    assert warnings("LoadAwareSchedulingArgs", {"estimator": "vpa"}) == [
        'args.estimator: "vpa" is not a registered estimator: koord-scheduler v1.8.0 starts and estimates with '
        '"defaultEstimator"'
    ]
    assert errors("LoadAwareSchedulingArgs", {"estimator": "vpa"}) == []


def test_prod_thresholds_are_not_range_checked() -> None:
    """Unlike usageThresholds, prodUsageThresholds pass ValidateLoadAwareSchedulingArgs unchecked."""
    args = {"prodUsageThresholds": {"cpu": 150, "memory": -5, "ephemeral-storage": 80}}
    assert errors("LoadAwareSchedulingArgs", args) == []
    found = warnings("LoadAwareSchedulingArgs", args)
    assert [w.split(":")[0] for w in found] == [
        "args.prodUsageThresholds.cpu",
        "args.prodUsageThresholds.memory",
    ]
    assert "estimated usage exceeds the node's allocatable" in found[0]
    assert "filtered out of every node" in found[1]


def test_an_unknown_match_policy_acts_as_once_satisfied() -> None:
    assert warnings("CoschedulingArgs", {"defaultMatchPolicy": "waiting-and-running"}) == []
    found = warnings("CoschedulingArgs", {"defaultMatchPolicy": "all"})
    assert len(found) == 1 and found[0].startswith('args.defaultMatchPolicy: "all" is none of')
    assert "behave as once-satisfied" in found[0]
    assert errors("CoschedulingArgs", {"defaultMatchPolicy": "all"}) == []


def test_the_deprecated_allocator_is_ignored() -> None:
    assert warnings("DeviceShareArgs", {"allocator": "gpu-topology"}) == [
        'args.allocator: "gpu-topology" is ignored: the field is deprecated and koord-scheduler v1.8.0 always '
        "uses its built-in allocator"
    ]


def test_reservation_workers_below_one_run_one() -> None:
    assert errors("ReservationArgs", {"controllerWorkers": 0}) == []
    assert warnings("ReservationArgs", {"controllerWorkers": -2}) == [
        "args.controllerWorkers: -2 is not checked by koord-scheduler v1.8.0: the reservation controller runs 1 worker"
    ]


def test_reservation_preemption_without_candidates() -> None:
    """getPreemptionArgs hands both minimums to kube-scheduler's preemption unchecked: both 0 gives 0
    candidates (kube-scheduler's own DefaultPreemptionArgs validation refuses the pair)."""
    both_zero = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}
    assert warnings("ReservationArgs", both_zero) == []
    found = warnings("ReservationArgs", {**both_zero, "enablePreemption": True})
    assert len(found) == 1 and found[0].startswith(
        "args: minCandidateNodesPercentage and minCandidateNodesAbsolute"
    )
    assert errors("ReservationArgs", {**both_zero, "enablePreemption": True}) == []


@pytest.mark.parametrize(
    ("args", "flagged"),
    [
        ({"monitorAllQuotas": True, "revokePodInterval": "0s"}, ["args.revokePodInterval"]),
        ({"monitorAllQuotas": True, "enableRuntimeQuota": False, "revokePodInterval": "0s"}, []),
        ({"revokePodInterval": "0s"}, []),
        (
            {"enableQueueHint": True, "quotaSnapshotUpdateInterval": "0s"},
            ["args.quotaSnapshotUpdateInterval"],
        ),
        (
            {"enableQueueHint": True, "quotaSnapshotUpdateInterval": "-1m"},
            ["args.quotaSnapshotUpdateInterval"],
        ),
        ({"enableQueueHint": True, "quotaSnapshotUpdateInterval": "30s"}, []),
    ],
)
def test_zero_intervals_of_running_loops(args: dict[str, Any], flagged: list[str]) -> None:
    """wait.Until with a period of 0 reruns at once; the loops start only with their switches on."""
    found = [f for f in run("ElasticQuotaArgs", args)[0] if f.severity == "warning"]
    assert [f.path for f in found] == flagged
    assert all("keeping a CPU busy" in f.message for f in found)


def test_a_negative_revoke_interval_is_an_error_not_also_a_warning() -> None:
    findings, _ = run("ElasticQuotaArgs", {"monitorAllQuotas": True, "revokePodInterval": "-1s"})
    assert [f.severity for f in findings] == ["error"]
