"""One test per configuration-level and framework rule, each with its valid and its invalid side."""

from __future__ import annotations

import json
from typing import Any

import pytest

from limitguard.schedcfg import Report, validate_text
from limitguard.schedcfg.tables.releases import Release
from tests.unit.schedcfg.helpers import check, config, messages, paths, with_args

ARGS0 = "profiles[0].pluginConfig[0].args"


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


# ------------------------------------------------------------------------------------------ by release
def _profile_for(plugins: dict[str, Any], minor: int, gates: dict[str, bool] | None = None) -> Report:
    document = config(profiles=[{"schedulerName": "s", "plugins": plugins}])
    return validate_text(json.dumps(document), release=Release(minor, gates or {}))


def test_weight_is_used_at_placement_score_from_1_36() -> None:
    """kube-scheduler config/v1/types.go (v0.36.3): weight is used for Score and PlacementScore plugins."""
    weighted = {"placementScore": {"enabled": [{"name": "PodGroupPodsCount", "weight": 3}]}}
    assert _profile_for(weighted, 36).warnings == []
    at_filter = _profile_for({"filter": {"enabled": [{"name": "NodePorts", "weight": 2}]}}, 37)
    assert [f.rule for f in at_filter.warnings] == ["plugins.weight-outside-score"]
    assert "placementScore" in at_filter.warnings[0].message
    assert (
        "placementScore"
        not in _profile_for({"filter": {"enabled": [{"name": "NodePorts", "weight": 2}]}}, 35)
        .warnings[0]
        .message
    )


def test_unconfirmed_points_warn_instead_of_refusing() -> None:
    """No in-tree PodGroupPostFilter plugin could be confirmed at v1.37.0-beta.0: a warning, not an error."""
    report = _profile_for({"podGroupPostFilter": {"enabled": [{"name": "DefaultPreemption"}]}}, 37)
    assert report.ok and [f.rule for f in report.warnings] == ["plugins.extension-point"]
    assert not _profile_for({"placementScore": {"enabled": [{"name": "ImageLocality"}]}}, 37).ok


def test_a_new_extension_point_is_an_unknown_field_for_older_releases_only() -> None:
    plugins = {"placementGenerate": {"enabled": [{"name": "TopologyPlacementGenerator"}]}}
    old = _profile_for(plugins, 35)
    assert [(f.path, f.rule) for f in old.errors] == [
        ("profiles[0].plugins.placementGenerate", "schema.unknown-field")
    ]
    assert (
        "strict decoding error" in old.errors[0].message and "from Kubernetes 1.36" in old.errors[0].message
    )
    assert _profile_for(plugins, 36).ok


def test_gang_scheduling_plugin_joins_the_defaults_only_with_its_gate() -> None:
    """GangScheduling is registered from 1.35 (its gate alpha, removed in 1.37): listing it is valid then."""
    enabled = {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}}
    assert _profile_for(enabled, 36, {"GangScheduling": True}).ok
    assert _profile_for(enabled, 37).ok
    assert (
        "GangScheduling" in paths(_profile_for(enabled, 34), "error")[0] or not _profile_for(enabled, 34).ok
    )
