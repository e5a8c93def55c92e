"""One test per rule of the other in-tree args and of the args dispatch, each with its valid and its invalid side.

The release tests read kubernetes pkg/scheduler/apis/config/validation/validation_pluginargs.go before and
after kubernetes PR #132120 and the scheduler's versioned gate specs (pkg/features).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from limitguard.schedcfg import Report, validate_text
from limitguard.schedcfg.tables.releases import Release
from tests.unit.schedcfg.helpers import config, fit_plus, messages, paths, with_args
from tests.unit.schedcfg.helpers import limitguard_view as check

ARGS0 = "profiles[0].pluginConfig[0].args"


# ------------------------------------------------------------------------------------------ other in-tree args
def test_default_preemption_not_both_zero() -> None:
    assert check(with_args("DefaultPreemption", {"minCandidateNodesPercentage": 0}, score=False)).ok
    report = check(
        with_args(
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            score=False,
        )
    )
    assert paths(report) == [f"{ARGS0}.minCandidateNodesPercentage", f"{ARGS0}.minCandidateNodesAbsolute"]


def test_inter_pod_affinity_weight_range() -> None:
    assert check(with_args("InterPodAffinity", {"hardPodAffinityWeight": 100})).ok
    assert paths(check(with_args("InterPodAffinity", {"hardPodAffinityWeight": 101}))) == [
        f"{ARGS0}.hardPodAffinityWeight"
    ]


def test_pod_topology_spread_rules() -> None:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
    }
    assert check(
        with_args("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [constraint]})
    ).ok
    report = check(
        with_args(
            "PodTopologySpread",
            {
                "defaultConstraints": [
                    constraint,
                    {**constraint, "labelSelector": {"matchLabels": {"a": "b"}}},
                ]
            },
        )
    )
    assert sorted(paths(report)) == [
        f"{ARGS0}.defaultConstraints[1]",
        f"{ARGS0}.defaultConstraints[1].labelSelector",
        f"{ARGS0}.defaultingType",
    ]


def test_node_affinity_requirements() -> None:
    def term(req: dict[str, Any], fields: bool = False) -> dict[str, Any]:
        key = "matchFields" if fields else "matchExpressions"
        return with_args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{key: [req]}]}
                }
            },
        )

    base = f"{ARGS0}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    assert check(term({"key": "zone", "operator": "In", "values": ["a"]})).ok
    assert check(term({"key": "metadata.name", "operator": "In", "values": ["n1"]}, fields=True)).ok
    assert paths(check(term({"key": "zone", "operator": "In"}))) == [f"{base}.matchExpressions[0].values"]
    assert paths(check(term({"key": "cores", "operator": "Gt", "values": ["x"]}))) == [
        f"{base}.matchExpressions[0].values[0]"
    ]
    assert paths(check(term({"key": "metadata.uid", "operator": "In", "values": ["u"]}, fields=True))) == [
        f"{base}.matchFields[0].key"
    ]


# ------------------------------------------------------------------------------------------ dispatch
def test_args_kind_must_match_the_plugin() -> None:
    report = check(fit_plus({"cpu": {"type": "LeastAllocated", "weight": 1}}, kind="NodeResourcesFitPlus"))
    assert messages(report) == [
        f'{ARGS0}.kind: Unsupported value: "NodeResourcesFitPlus": supported values: '
        '"NodeResourcesFitPlusArgs", "ResourceTypesArgs"'
    ]


def test_args_kind_mismatch_still_reports_other_errors() -> None:
    report = check(fit_plus({"cpu": {"type": "Most", "weight": 1}}, kind="NodeResourcesFitArgs"))
    assert paths(report) == [f"{ARGS0}.kind", f"{ARGS0}.resources.cpu.type"]


def test_args_api_version_differing_from_the_config_is_a_warning() -> None:
    args = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta3",
        "kind": "ScarceResourceAvoidanceArgs",
        "resources": ["nvidia.com/gpu"],
    }
    report = check(with_args("ScarceResourceAvoidance", args))
    assert report.ok and paths(report, "warning") == [f"{ARGS0}.apiVersion"]


def test_unknown_plugin_args_pass_through_with_a_note() -> None:
    report = check(with_args("MyPlugin", {"anything": {"goes": [1, 2]}}))
    assert report.ok and [f.rule for f in report.infos] == ["args.unknown-plugin"]


def test_every_error_is_reported_not_just_the_first() -> None:
    doc = config(
        parallelism=0,
        healthzBindAddress="x",
        profiles=[
            {
                "schedulerName": "a",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFitPlus",
                        "args": {"resources": {"cpu": {"type": "MostAlocated", "weight": 101}}},
                    }
                ],
            },
            {"schedulerName": "a"},
        ],
        extenders=[{"urlPrefix": "u", "prioritizeVerb": "p"}],
    )
    assert sorted(paths(check(doc))) == sorted(
        [
            "parallelism",
            "healthzBindAddress",
            f"{ARGS0}.resources.cpu.type",
            f"{ARGS0}.resources.cpu.weight",
            "profiles[1].schedulerName",
            "extenders[0].weight",
        ]
    )


# ------------------------------------------------------------------------------------------ by release
def _check_for(document: dict[str, Any], minor: int, gates: dict[str, bool] | None = None) -> Report:
    return validate_text(json.dumps(document), release=Release(minor, gates or {}))


def test_dra_binding_timeout_follows_the_gate_defaults_of_each_release() -> None:
    """ValidateDynamicResourcesArgs with DRADeviceBindingConditions alpha/off (1.35), beta/on (1.36)."""
    args = with_args("DynamicResources", {"bindingTimeout": "30s"}, score=False)
    assert paths(_check_for(args, 35)) == [f"{ARGS0}.bindingTimeout"]
    assert _check_for(args, 36).ok and _check_for(args, 37).ok
    off = _check_for(args, 36, {"DRAResourceClaimDeviceStatus": False})
    assert paths(off) == [f"{ARGS0}.bindingTimeout"]
    assert "DRAResourceClaimDeviceStatus feature gate is disabled" in off.errors[0].message


def test_an_omitted_binding_timeout_is_never_forbidden() -> None:
    """The plugin, not defaulting, supplies the 10m binding timeout: args without it stay valid whatever
    the gates (a default filled in before validation would be refused with a gate off)."""
    args = with_args("DynamicResources", {"filterTimeout": "5s"}, score=False)
    assert _check_for(args, 36, {"DRAResourceClaimDeviceStatus": False}).ok
    assert _check_for(args, 35).ok


def test_volume_binding_points_are_checked_only_with_the_gate_on() -> None:
    """validateFunctionShape runs with StorageCapacityScoring on (default from 1.37); off, only `shape`."""
    args = with_args("VolumeBinding", {"shape": [{"utilization": 101, "score": -1}]}, score=False)
    assert paths(_check_for(args, 36)) == [f"{ARGS0}.shape"]
    assert "off by default in Kubernetes 1.36" in _check_for(args, 36).errors[0].message
    assert sorted(paths(_check_for(args, 37))) == [f"{ARGS0}.shape[0].score", f"{ARGS0}.shape[0].utilization"]
    off = _check_for(args, 37, {"StorageCapacityScoring": False})
    assert paths(off) == [f"{ARGS0}.shape"] and "on by default in Kubernetes 1.37" in off.errors[0].message
    assert _check_for(with_args("VolumeBinding", {"shape": []}, score=False), 37).ok  # defaulted shape


@pytest.mark.parametrize("minor", [31, 35])
def test_fit_ratio_before_1_36_missing_is_a_start_up_panic_and_extra_is_ignored(minor: int) -> None:
    """ValidateNodeResourcesFitArgs before kubernetes PR #132120: only a given shape is validated."""
    missing = _check_for(fit_args({"type": "RequestedToCapacityRatio"}), minor)
    assert "panics when it starts" in missing.errors[0].message
    shape = {"shape": [{"utilization": 0, "score": 0}]}
    extra = _check_for(fit_args({"type": "LeastAllocated", "requestedToCapacityRatio": shape}), minor)
    assert extra.ok and [f.rule for f in extra.warnings] == ["fit.ratio"]
    bad = {"shape": [{"utilization": 50, "score": 0}, {"utilization": 10, "score": 1}]}
    still_checked = _check_for(fit_args({"type": "LeastAllocated", "requestedToCapacityRatio": bad}), minor)
    assert paths(still_checked) == [f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization"]


@pytest.mark.parametrize("minor", [36, 37])
def test_fit_ratio_from_1_36_is_required_and_forbidden_by_type(minor: int) -> None:
    missing = _check_for(fit_args({"type": "RequestedToCapacityRatio"}), minor)
    assert "panics" not in missing.errors[0].message
    shape = {"shape": [{"utilization": 0, "score": 0}]}
    extra = _check_for(fit_args({"type": "LeastAllocated", "requestedToCapacityRatio": shape}), minor)
    assert messages(extra) == [
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not "
        "RequestedToCapacityRatio"
    ]


def fit_args(strategy: dict[str, Any]) -> dict[str, Any]:
    return with_args("NodeResourcesFit", {"scoringStrategy": strategy})
