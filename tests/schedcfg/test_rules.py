"""One test per rule, each with its valid and its invalid side."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from webhook.schedcfg import validate_text
from webhook.schedcfg.rules.releases import Release

from .helpers import check, config, messages, paths, with_args

ARGS0 = "profiles[0].pluginConfig[0].args"

DESIGN_DOC_CONFIG: dict[str, Any] = config(
    profiles=[
        {
            "schedulerName": "koord-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFitPlus",
                    "args": {
                        "apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "ResourceTypesArgs",
                        "resources": {
                            "nvidia.com/gpu": {"type": "MostAllocated", "weight": 2},
                            "cpu": {"type": "LeastAllocated", "weight": 1},
                            "memory": {"type": "LeastAllocated", "weight": 1},
                        },
                    },
                },
                {
                    "name": "ScarceResourceAvoidance",
                    "args": {
                        "apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "ScarceResourceAvoidanceArgs",
                        "resources": ["nvidia.com/gpu"],
                    },
                },
            ],
            "plugins": {
                "score": {
                    "enabled": [
                        {"name": "NodeResourcesFitPlus", "weight": 2},
                        {"name": "ScarceResourceAvoidance", "weight": 2},
                    ],
                    "disabled": [{"name": "*"}],
                }
            },
        }
    ]
)


def fit_plus(resources: dict[str, Any], kind: str = "NodeResourcesFitPlusArgs") -> dict[str, Any]:
    return with_args("NodeResourcesFitPlus", {"kind": kind, "resources": resources})


def fit(strategy: dict[str, Any]) -> dict[str, Any]:
    return with_args("NodeResourcesFit", {"scoringStrategy": strategy})


# ------------------------------------------------------------------------------------------ design docs
def test_design_document_config_is_valid() -> None:
    report = check(DESIGN_DOC_CONFIG)
    assert report.ok and not report.warnings, report.format()


def test_design_document_config_with_nodefitplus_kind_is_valid() -> None:
    doc = copy.deepcopy(DESIGN_DOC_CONFIG)
    doc["profiles"][0]["pluginConfig"][0]["args"]["kind"] = "NodeResourcesFitPlusArgs"
    assert check(doc).ok


# ------------------------------------------------------------------------------------------ weights
@pytest.mark.parametrize(("weight", "ok"), [(0, False), (1, True), (100, True), (101, False)])
def test_fit_plus_weight_range(weight: int, ok: bool) -> None:
    report = check(fit_plus({"nvidia.com/gpu": {"type": "MostAllocated", "weight": weight}}))
    assert report.ok is ok
    if not ok:
        assert messages(report) == [
            f'{ARGS0}.resources["nvidia.com/gpu"].weight: Invalid value: {weight}: '
            "not in valid range [1, 100]"
        ]


# Issue 15: kube-scheduler's defaulting turns weight 0 into 1 and starts, so 0 is a warning (it was an error).
@pytest.mark.parametrize(("weight", "ok"), [(0, True), (1, True), (100, True), (101, False), (-1, False)])
def test_node_resources_fit_weight_range(weight: int, ok: bool) -> None:
    report = check(fit({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": weight}]}))
    assert report.ok is ok
    weight_path = f"{ARGS0}.scoringStrategy.resources[0].weight"
    if not ok:
        assert messages(report) == [
            f'{weight_path}: Invalid value: {weight}: resource weight of "cpu" not in valid range (0, 100]'
        ]
        assert "0 becomes 1" not in messages(report)[0] and "into 1" not in messages(report)[0]
    if weight == 0:
        assert [(f.path, f.rule) for f in report.warnings] == [(weight_path, "defaults.zero-replaced")]


def test_node_resources_fit_weight_may_be_omitted() -> None:
    assert check(fit({"type": "LeastAllocated", "resources": [{"name": "cpu"}]})).ok


@pytest.mark.parametrize(("weight", "ok"), [(0, False), (1, True), (100, True), (101, False)])
def test_limit_aware_scoring_weight_range(weight: int, ok: bool) -> None:
    report = check(with_args("LimitAware", {"scoringResourceWeights": {"cpu": weight}}))
    assert report.ok is ok
    assert paths(report) == ([] if ok else [f"{ARGS0}.scoringResourceWeights.cpu"])


# Issue 15: 0 is defaulted to 1 by kube-scheduler (it was rejected here before).
@pytest.mark.parametrize(("weight", "ok"), [(1, True), (2, False), (0, True)])
def test_balanced_allocation_weight_must_be_one(weight: int, ok: bool) -> None:
    report = check(
        with_args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": weight}]})
    )
    assert report.ok is ok
    if not ok:
        assert messages(report) == [f"{ARGS0}.resources[0].weight: Invalid value: {weight}: must be 1"]


def test_balanced_allocation_duplicate_resource() -> None:
    report = check(
        with_args(
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
        )
    )
    assert messages(report) == [f'{ARGS0}.resources[1].name: Duplicate value: "cpu"']


def test_float_weight_is_not_an_integer() -> None:
    report = check(fit_plus({"cpu": {"type": "LeastAllocated", "weight": 1.0}}))
    assert paths(report) == [f"{ARGS0}.resources.cpu.weight"]
    assert "must be of type integer" in report.errors[0].message


# ------------------------------------------------------------------------------------------ strategy types
def test_misspelled_fit_plus_type_has_the_spec_message() -> None:
    report = check(fit_plus({"nvidia.com/gpu": {"type": "MostAlocated", "weight": 2}}))
    assert messages(report) == [
        'profiles[0].pluginConfig[0].args.resources["nvidia.com/gpu"].type: Unsupported value: "MostAlocated": '
        'supported values: "LeastAllocated", "MostAllocated"'
    ]


def test_misspelled_node_resources_fit_type() -> None:
    report = check(fit({"type": "MostAlocated"}))
    assert messages(report) == [
        f'{ARGS0}.scoringStrategy.type: Unsupported value: "MostAlocated": supported '
        'values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    ]


def test_scoring_strategy_type_is_required_when_strategy_given() -> None:
    assert paths(check(fit({"resources": [{"name": "cpu", "weight": 1}]}))) == [
        f"{ARGS0}.scoringStrategy.type"
    ]
    assert check(fit({"type": "LeastAllocated"})).ok


def test_fit_plus_entry_needs_type_and_weight() -> None:
    report = check(fit_plus({"cpu": {}}))
    assert sorted(paths(report)) == [f"{ARGS0}.resources.cpu.type", f"{ARGS0}.resources.cpu.weight"]


# ------------------------------------------------------------------------------------------ shapes
def rtcr(shape: list[dict[str, int]]) -> dict[str, Any]:
    return fit({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}})


def test_shape_strictly_increasing() -> None:
    assert check(rtcr([{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}])).ok
    report = check(
        rtcr(
            [
                {"utilization": 50, "score": 0},
                {"utilization": 50, "score": 10},
                {"utilization": 40, "score": 5},
            ]
        )
    )
    shape = f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape"
    # validateFunctionShape reports the first point out of order only (issue 15: kube-scheduler's verdict)
    assert paths(report) == [f"{shape}[1].utilization"]
    assert "strictly increasing" in report.errors[0].message


def test_shape_ranges() -> None:
    report = check(rtcr([{"utilization": 0, "score": 11}, {"utilization": 101, "score": 0}]))
    shape = f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape"
    assert sorted(paths(report)) == [f"{shape}[0].score", f"{shape}[1].utilization"]


def test_requested_to_capacity_ratio_param_required_and_forbidden() -> None:
    report = check(fit({"type": "RequestedToCapacityRatio"}))
    assert messages(report) == [
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio: Required value: must be "
        "specified when type is RequestedToCapacityRatio"
    ]
    report = check(
        fit(
            {"type": "MostAllocated", "requestedToCapacityRatio": {"shape": [{"utilization": 1, "score": 1}]}}
        )
    )
    assert paths(report) == [f"{ARGS0}.scoringStrategy.requestedToCapacityRatio"]


def test_volume_binding_shape_needs_a_feature_gate_and_must_increase() -> None:
    # Issue 15: with StorageCapacityScoring off (the default) kube-scheduler rejects any shape (was a warning).
    args = {"shape": [{"utilization": 10, "score": 1}, {"utilization": 5, "score": 2}]}
    report = check(with_args("VolumeBinding", args))
    assert paths(report) == [f"{ARGS0}.shape"]
    assert "StorageCapacityScoring" in report.errors[0].message
    gated = validate_text(
        json.dumps(with_args("VolumeBinding", args)), release=Release(35, {"StorageCapacityScoring": True})
    )
    assert paths(gated) == [f"{ARGS0}.shape[1].utilization"]
    assert check(with_args("VolumeBinding", {"bindTimeoutSeconds": 0})).ok
    assert not check(with_args("VolumeBinding", {"bindTimeoutSeconds": -1})).ok


# ------------------------------------------------------------------------------------------ ratios
@pytest.mark.parametrize(
    ("ratio", "ok"),
    [
        (150, True),
        ("150%", True),
        ("0%", True),
        (0, True),
        ("150", False),
        (150.0, False),
        (-1, False),
        (True, False),
        ("150 %", False),
    ],
)
def test_limit_aware_ratio_values(ratio: Any, ok: bool) -> None:
    report = check(with_args("LimitAware", {"defaultLimitToAllocatableRatio": {"cpu": ratio}}))
    assert report.ok is ok
    if not ok:
        assert paths(report) == [f"{ARGS0}.defaultLimitToAllocatableRatio.cpu"]
        assert 'percent string ("150%")' in report.errors[0].message


def test_limit_aware_unknown_field_is_rejected() -> None:
    report = check(with_args("LimitAware", {"resources": [{"name": "cpu", "weight": 1}]}))
    assert paths(report) == [f"{ARGS0}.resources"]


# ------------------------------------------------------------------------------------------ resource names
@pytest.mark.parametrize(
    ("args", "bad_path"),
    [
        (
            {
                "kind": "NodeResourcesFitPlusArgs",
                "resources": {"gpu": {"type": "MostAllocated", "weight": 1}},
            },
            f"{ARGS0}.resources.gpu",
        ),
        (
            {
                "kind": "NodeResourcesFitPlusArgs",
                "resources": {"Nvidia.com/gpu": {"type": "MostAllocated", "weight": 1}},
            },
            f'{ARGS0}.resources["Nvidia.com/gpu"]',
        ),
    ],
)
def test_fit_plus_resource_names(args: dict[str, Any], bad_path: str) -> None:
    assert paths(check(with_args("NodeResourcesFitPlus", args))) == [bad_path]


def test_scarce_resource_names() -> None:
    assert check(with_args("ScarceResourceAvoidance", {"resources": ["nvidia.com/gpu", "hugepages-2Mi"]})).ok
    report = check(with_args("ScarceResourceAvoidance", {"resources": ["nvidia.com/gpu", "gpu"]}))
    assert paths(report) == [f"{ARGS0}.resources[1]"]


def test_limit_aware_resource_name_keys() -> None:
    report = check(with_args("LimitAware", {"defaultLimitToAllocatableRatio": {"nvidia com/gpu": 100}}))
    assert paths(report) == [f'{ARGS0}.defaultLimitToAllocatableRatio["nvidia com/gpu"]']


def test_ignored_resource_groups_cannot_contain_slash() -> None:
    assert check(with_args("NodeResourcesFit", {"ignoredResourceGroups": ["example.com"]})).ok
    report = check(with_args("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/foo"]}))
    assert messages(report) == [
        f'{ARGS0}.ignoredResourceGroups[0]: Invalid value: "example.com/foo": '
        "resource group name can't contain '/'"
    ]


# ------------------------------------------------------------------------------------------ top level
@pytest.mark.parametrize(
    ("fields", "bad_path"),
    [
        ({"parallelism": 0}, "parallelism"),
        ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore"),
        ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds"),
        ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4}, "podMaxBackoffSeconds"),
        ({"podInitialBackoffSeconds": 20}, "podMaxBackoffSeconds"),  # max defaults to 10
    ],
)
def test_top_level_ranges(fields: dict[str, Any], bad_path: str) -> None:
    assert paths(check(config(**fields))) == [bad_path]


def test_top_level_ranges_valid_side() -> None:
    assert check(
        config(
            parallelism=1, percentageOfNodesToScore=100, podInitialBackoffSeconds=5, podMaxBackoffSeconds=5
        )
    ).ok


def test_healthz_bind_address_is_not_a_v1_field() -> None:
    report = check(config(healthzBindAddress="0.0.0.0:10251"))
    assert paths(report) == ["healthzBindAddress"]
    assert "removed in kubescheduler.config.k8s.io/v1beta3" in report.errors[0].message
    # v1beta2/v1beta3 are not served by any supported release; their schema still runs as a migration aid
    assert paths(check(config("v1beta3", healthzBindAddress="0.0.0.0:10251"))) == [
        "apiVersion",
        "healthzBindAddress",
    ]
    assert paths(check(config("v1beta2", healthzBindAddress="0.0.0.0:10251"))) == ["apiVersion"]


def test_multipoint_does_not_exist_in_v1beta2() -> None:
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": "CapacityScheduling"}]}}}
    assert paths(check(config("v1beta2", profiles=[profile]))) == [
        "apiVersion",
        "profiles[0].plugins.multiPoint",
    ]
    assert paths(check(config("v1beta3", profiles=[profile]))) == ["apiVersion"]


def test_queue_sort_plugin_enabled_through_multipoint_counts_at_queue_sort() -> None:
    profile: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}}
    report = check(config(profiles=[profile]))
    assert messages(report)[0].startswith(
        'profiles[0].plugins.queueSort: Invalid value: ["PrioritySort", "Coscheduling"]: only one queue sort'
    )
    profile["plugins"]["queueSort"] = QS_COSCHED
    assert check(config(profiles=[profile])).ok


def test_unsupported_api_version() -> None:
    report = check(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta1", "kind": "KubeSchedulerConfiguration"}
    )
    assert paths(report) == ["apiVersion"]


def test_leader_election_rules() -> None:
    assert check(config(leaderElection={"leaseDuration": "20s", "renewDeadline": "15s"})).ok
    report = check(
        config(
            leaderElection={
                "leaseDuration": "10s",
                "renewDeadline": "10s",
                "resourceLock": "endpoints",
                "retryPeriod": "-1s",
            }
        )
    )
    assert sorted(paths(report)) == [
        "leaderElection.leaseDuration",
        "leaderElection.resourceLock",
        "leaderElection.retryPeriod",
    ]
    # Issue 15: a zero duration is replaced by its default (2s) - a warning, not an error as before
    zero = check(config(leaderElection={"retryPeriod": "0s"}))
    assert zero.ok and [(f.path, f.rule) for f in zero.warnings] == [
        ("leaderElection.retryPeriod", "defaults.zero-replaced")
    ]
    assert check(config(leaderElection={"leaderElect": False, "resourceLock": "endpoints"})).ok
    assert paths(check(config(leaderElection={"leaseDuration": "15 seconds"}))) == [
        "leaderElection.leaseDuration"
    ]


# ------------------------------------------------------------------------------------------ profiles
def test_duplicate_scheduler_name() -> None:
    assert check(config(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}])).ok
    report = check(config(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]))
    assert messages(report) == [
        'profiles[1].schedulerName: Duplicate value: "a": already used by profiles[0].schedulerName'
    ]


def test_scheduler_name_defaults_only_for_a_single_profile() -> None:
    assert check(config(profiles=[{}])).ok
    assert paths(check(config(profiles=[{}, {"schedulerName": "b"}]))) == ["profiles[0].schedulerName"]
    assert paths(check(config(profiles=[{"schedulerName": ""}]))) == ["profiles[0].schedulerName"]


QS_COSCHED = {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}


def test_two_queue_sort_plugins() -> None:
    assert check(config(profiles=[{"plugins": {"queueSort": QS_COSCHED}}])).ok
    report = check(
        config(
            profiles=[
                {
                    "plugins": {
                        "queueSort": {
                            "enabled": [{"name": "Coscheduling"}, {"name": "QOSSort"}],
                            "disabled": [{"name": "*"}],
                        }
                    }
                }
            ]
        )
    )
    assert paths(report) == ["profiles[0].plugins.queueSort"]
    assert "only one queue sort plugin can be enabled" in report.errors[0].message


def test_queue_sort_without_disabling_the_default_is_two_plugins() -> None:
    report = check(config(profiles=[{"plugins": {"queueSort": {"enabled": [{"name": "QOSSort"}]}}}]))
    assert paths(report) == ["profiles[0].plugins.queueSort"]
    assert 'disabled: [{name: "*"}]' in report.errors[0].message


def test_queue_sort_must_be_the_same_in_every_profile() -> None:
    same = [
        {"schedulerName": "a", "plugins": {"queueSort": QS_COSCHED}},
        {"schedulerName": "b", "plugins": {"queueSort": QS_COSCHED}},
    ]
    assert check(config(profiles=same)).ok
    different = [{"schedulerName": "a", "plugins": {"queueSort": QS_COSCHED}}, {"schedulerName": "b"}]
    report = check(config(profiles=different))
    assert paths(report) == ["profiles[1].plugins.queueSort"]


def test_queue_sort_args_must_be_the_same_in_every_profile() -> None:
    profiles = [
        {
            "schedulerName": n,
            "plugins": {"queueSort": QS_COSCHED},
            "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": s}}],
        }
        for n, s in (("a", 10), ("b", 20))
    ]
    assert paths(check(config(profiles=profiles))) == ["profiles[1].pluginConfig[0].args"]


def test_no_queue_sort_and_no_bind_plugin() -> None:
    report = check(config(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}}]))
    assert sorted(paths(report)) == ["profiles[0].plugins.bind", "profiles[0].plugins.queueSort"]


def test_duplicate_plugin_config() -> None:
    entry = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "LeastAllocated"}}}
    assert check(config(profiles=[{"pluginConfig": [entry]}])).ok
    report = check(config(profiles=[{"pluginConfig": [entry, entry]}]))
    assert paths(report) == ["profiles[0].pluginConfig[1]"]  # validation.go's path (was ...[1].name)


def test_removed_plugin_enabled_is_an_error_disabled_a_warning() -> None:
    enabled = check(config(profiles=[{"plugins": {"score": {"enabled": [{"name": "SelectorSpread"}]}}}]))
    assert paths(enabled) == ["profiles[0].plugins.score.enabled[0]"]
    disabled = check(config(profiles=[{"plugins": {"score": {"disabled": [{"name": "SelectorSpread"}]}}}]))
    assert disabled.ok and paths(disabled, "warning") == ["profiles[0].plugins.score.disabled[0]"]


def test_weight_outside_score_is_a_warning() -> None:
    report = check(
        config(profiles=[{"plugins": {"filter": {"enabled": [{"name": "NodePorts", "weight": 3}]}}}])
    )
    assert report.ok and paths(report, "warning") == ["profiles[0].plugins.filter.enabled[0].weight"]
    assert not check(
        config(profiles=[{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 3}]}}}])
    ).warnings


def test_args_for_a_plugin_the_profile_does_not_enable() -> None:
    report = check(with_args("ScarceResourceAvoidance", {"resources": ["nvidia.com/gpu"]}, score=False))
    assert report.ok and paths(report, "warning") == ["profiles[0].pluginConfig[0]"]
    assert not check(with_args("ScarceResourceAvoidance", {"resources": ["nvidia.com/gpu"]})).warnings


def test_dominant_score_weight_is_a_warning() -> None:
    profile = {
        "plugins": {
            "score": {
                "enabled": [{"name": "ImageLocality", "weight": 5}, {"name": "TaintToleration", "weight": 5}],
                "disabled": [{"name": "*"}],
            }
        }
    }
    assert not check(config(profiles=[profile])).warnings
    profile["plugins"]["score"]["enabled"][0]["weight"] = 6
    report = check(config(profiles=[profile]))
    assert report.ok and paths(report, "warning") == ["profiles[0].plugins.score.enabled[0].weight"]


# ------------------------------------------------------------------------------------------ extenders
def test_two_bind_extenders() -> None:
    one = [{"urlPrefix": "http://a", "bindVerb": "bind"}, {"urlPrefix": "http://b", "filterVerb": "filter"}]
    assert check(config(extenders=one)).ok
    two = [{"urlPrefix": "http://a", "bindVerb": "bind"}, {"urlPrefix": "http://b", "bindVerb": "bind"}]
    assert messages(check(config(extenders=two))) == [
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind '
        "(extenders 0, 1 set bindVerb)"
    ]


def test_prioritize_extender_needs_weight() -> None:
    assert check(config(extenders=[{"urlPrefix": "http://a", "prioritizeVerb": "p", "weight": 1}])).ok
    report = check(config(extenders=[{"urlPrefix": "http://a", "prioritizeVerb": "p"}]))
    assert messages(report) == [
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it "
        "(prioritizeVerb is set)"
    ]


def test_extender_managed_resources() -> None:
    good = [{"urlPrefix": "u", "managedResources": [{"name": "example.com/foo"}]}]
    assert check(config(extenders=good)).ok
    bad = [
        {
            "urlPrefix": "u",
            "managedResources": [
                {"name": "kubernetes.io/foo"},
                {"name": "example.com/a"},
                {"name": "example.com/a"},
            ],
        }
    ]
    assert paths(check(config(extenders=bad))) == [
        "extenders[0].managedResources[0].name",
        "extenders[0].managedResources[2].name",
    ]


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
