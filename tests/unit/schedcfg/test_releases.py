"""Per-release tables, feature gates, v1 defaulting and the args registry.

Sources of the release facts (read, not copied): kubernetes/kube-scheduler config/v1/types.go and
framework/interface.go at v0.35.7, v0.36.3 and v0.37.0-beta.0; kubernetes pkg/features (the scheduler's
versioned gate specs, 1.38 development line, which keeps every step since each gate's alpha);
pkg/scheduler/framework/plugins/registry.go and the plugins' interface assertions.
"""

from __future__ import annotations

import pytest

from limitguard.schedcfg import schemas
from limitguard.schedcfg.args import ARGS_KINDS, PLUGIN_ARGS_KINDS
from limitguard.schedcfg.rules.defaults import apply_defaults
from limitguard.schedcfg.rules.effective import effective_point, merged_multipoint
from limitguard.schedcfg.rules.framework import near_miss
from limitguard.schedcfg.tables.plugin_tables import (
    default_plugins,
    extension_points,
    in_tree,
    in_tree_plugins,
)
from limitguard.schedcfg.tables.readers import in_tree_reader
from limitguard.schedcfg.tables.releases import (
    Release,
    ReleaseError,
    kube_scheduler_release,
    parse_feature_gates,
    parse_version,
)


@pytest.mark.parametrize(
    ("text", "minor"), [("1.31", 31), ("v1.33", 33), ("v1.35.2", 35), ("1.34.0-gke.1", 34)]
)
def test_versions_parse(text: str, minor: int) -> None:
    assert parse_version(text) == minor


@pytest.mark.parametrize("text", ["1.30", "1.38", "2.0", "latest", ""])
def test_unsupported_versions_are_refused(text: str) -> None:
    with pytest.raises(ReleaseError):
        parse_version(text)


def test_feature_gates_syntax() -> None:
    assert parse_feature_gates("A=true, B=false") == {"A": True, "B": False}
    with pytest.raises(ReleaseError):
        parse_feature_gates("A=yes")


def test_gate_defaults_follow_the_release() -> None:
    assert not Release(33).enabled("DynamicResourceAllocation")
    assert Release(34).enabled("DynamicResourceAllocation")
    assert not Release(35).enabled("DRADeviceBindingConditions")
    assert kube_scheduler_release("1.35", "DRADeviceBindingConditions=true").enabled(
        "DRADeviceBindingConditions"
    )
    assert not Release(32).enabled("DRAResourceClaimDeviceStatus") and Release(33).enabled(
        "DRAResourceClaimDeviceStatus"
    )


@pytest.mark.parametrize(
    ("gate", "off_until", "on_from"),
    [
        ("DRADeviceBindingConditions", 35, 36),  # beta and on in 1.36
        ("StorageCapacityScoring", 36, 37),  # beta and on in 1.37
        ("NodeDeclaredFeatures", 35, 36),  # beta 1.36, GA 1.37
    ],
)
def test_gates_turn_on_in_their_release(gate: str, off_until: int, on_from: int) -> None:
    assert not Release(off_until).enabled(gate)
    assert Release(on_from).enabled(gate) and Release(37).enabled(gate)


def test_a_locked_gate_set_to_the_other_value_is_refused() -> None:
    """component-base: "cannot set feature gate X to false, feature is locked to true"."""
    assert not kube_scheduler_release("1.36", "DRAResourceClaimDeviceStatus=false").enabled(
        "DRAResourceClaimDeviceStatus"
    )
    with pytest.raises(
        ReleaseError, match="DRAResourceClaimDeviceStatus to false, feature is locked to true"
    ):
        kube_scheduler_release("1.37", "DRAResourceClaimDeviceStatus=false")
    with pytest.raises(ReleaseError, match="NodeDeclaredFeatures to false"):
        kube_scheduler_release("1.37", "NodeDeclaredFeatures=false")
    with pytest.raises(ReleaseError, match="DynamicResourceAllocation"):
        kube_scheduler_release("1.35", "DynamicResourceAllocation=false")
    assert kube_scheduler_release("1.37", "DRAResourceClaimDeviceStatus=true").enabled(
        "DRAResourceClaimDeviceStatus"
    )


def test_a_removed_gate_is_refused() -> None:
    assert kube_scheduler_release("1.36", "GangScheduling=true").enabled("GangScheduling")
    with pytest.raises(ReleaseError, match="unrecognized feature gate: GangScheduling"):
        kube_scheduler_release("1.37", "GangScheduling=true")
    with pytest.raises(ReleaseError, match="VolumeCapacityPriority"):
        kube_scheduler_release("1.33", "VolumeCapacityPriority=true")


def test_extension_points_per_release() -> None:
    """kube-scheduler config/v1/types.go Plugins at v0.35.7, v0.36.3, v0.37.0-beta.0."""
    base = extension_points(Release(35))
    assert len(base) == 12 and "placementGenerate" not in base
    assert extension_points(Release(36)) == (*base, "placementGenerate", "placementScore")
    assert extension_points(Release(37)) == (
        *base,
        "placementGenerate",
        "placementScore",
        "podGroupPostFilter",
    )
    for minor in (31, 35, 36, 37):
        assert "placementFeasible" not in extension_points(Release(minor))


def test_plugin_points_change_by_release() -> None:
    assert "score" not in (in_tree_plugins(Release(34))["DynamicResources"] or ())
    assert "score" in (in_tree_plugins(Release(35))["DynamicResources"] or ())  # kubernetes PR #134711
    assert "placementScore" not in (in_tree_plugins(Release(35))["NodeResourcesFit"] or ())
    assert "placementScore" in (in_tree_plugins(Release(36))["NodeResourcesFit"] or ())
    assert "TopologyPlacementGenerator" not in in_tree_plugins(Release(35))
    assert in_tree_plugins(Release(36))["TopologyPlacementGenerator"] == {"placementGenerate"}
    assert in_tree_plugins(Release(36))["PodGroupPodsCount"] == {"placementScore"}
    assert in_tree_plugins(Release(35))["NodeDeclaredFeatures"] == {"preFilter", "filter"}


def test_in_tree_tables_for_other_schedulers() -> None:
    tables = in_tree(Release(37))
    assert tables.extension_points == extension_points(Release(37))
    assert tables.plugins == in_tree_plugins(Release(37))
    assert tables.default_plugins == default_plugins(Release(37))


def test_served_api_versions() -> None:
    for minor in (31, 35):
        assert Release(minor).serves("v1")
        assert not Release(minor).serves("v1beta3") and not Release(minor).serves("v1beta2")


def names(minor: int) -> list[str]:
    return [str(p["name"]) for p in default_plugins(Release(minor))]


def test_default_plugins_per_release() -> None:
    assert {"EBSLimits", "GCEPDLimits", "AzureDiskLimits"} <= set(names(31))
    assert not {"EBSLimits", "GCEPDLimits", "AzureDiskLimits"} & set(names(32))
    assert "DynamicResources" not in names(33)
    later = names(34)
    assert later.index("DynamicResources") == later.index("DefaultPreemption") - 1
    weights = {p["name"]: p.get("weight") for p in default_plugins(Release(35))}
    assert weights["TaintToleration"] == 3 and weights["NodeAffinity"] == 2 and weights["ImageLocality"] == 1


def test_default_plugins_follow_the_gates_of_1_36_and_1_37() -> None:
    """NodeDeclaredFeatures joins the default set with its gate (on from 1.36); the workload plugins only
    with TopologyAwareWorkloadScheduling (alpha, off), PodGroupPodsCount with weight 1."""
    assert "NodeDeclaredFeatures" not in names(35) and "NodeDeclaredFeatures" in names(36)
    assert "NodeDeclaredFeatures" in names(37)
    assert "TopologyPlacementGenerator" not in names(37)
    topology = default_plugins(Release(36, {"TopologyAwareWorkloadScheduling": True}))
    assert {"name": "PodGroupPodsCount", "weight": 1} in topology
    assert {"name": "TopologyPlacementGenerator"} in topology
    assert "GangScheduling" in [p["name"] for p in default_plugins(Release(36, {"GangScheduling": True}))]


def test_multipoint_merge_keeps_the_place_of_a_reconfigured_default() -> None:
    profile = {
        "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}, {"name": "Mine"}]}}
    }
    merged = merged_multipoint(profile, in_tree_reader(Release(35)))
    order = [p["name"] for p in merged]
    assert order.index("NodeResourcesFit") == names(35).index("NodeResourcesFit") and order[-1] == "Mine"
    assert next(p for p in merged if p["name"] == "NodeResourcesFit")["weight"] == 5


def test_effective_points_follow_the_extension_point_table() -> None:
    assert effective_point({}, "queueSort", in_tree_reader(Release(35))) == ["PrioritySort"]
    assert effective_point({}, "bind", in_tree_reader(Release(35))) == ["DefaultBinder"]
    assert "NodePorts" not in effective_point({}, "score", in_tree_reader(Release(35)))
    disabled = {"plugins": {"score": {"disabled": [{"name": "*"}]}}}
    assert effective_point(disabled, "score", in_tree_reader(Release(35))) == []


@pytest.mark.parametrize(
    ("name", "close"),
    [
        ("NodeResourceFit", "NodeResourcesFit"),
        ("nodeaffinity", "NodeAffinity"),
        ("TaintTolerations", "TaintToleration"),
        ("Coscheduling", None),
        ("NodeResourcesAllocatable", None),
        ("LoadAwareScheduling", None),
        ("MyScorer", None),
    ],
)
def test_near_misses_only_for_real_typos(name: str, close: str | None) -> None:
    assert near_miss(name, sorted(in_tree_plugins(Release(35)))) == close


def test_defaulting_follows_defaults_go_and_reports_replaced_zeros() -> None:
    config = {
        "leaderElection": {"retryPeriod": "0s", "leaseDuration": "0s"},
        "clientConnection": {"burst": 0},
        "profiles": [{}],
    }
    defaulted, warnings = apply_defaults(config)
    assert defaulted["parallelism"] == 16 and defaulted["podMaxBackoffSeconds"] == 10
    assert defaulted["profiles"][0]["schedulerName"] == "default-scheduler"
    election = defaulted["leaderElection"]
    assert (election["retryPeriod"], election["leaseDuration"], election["resourceLock"]) == (
        "2s",
        "15s",
        "leases",
    )
    assert defaulted["clientConnection"] == {
        "burst": 100,
        "qps": 50.0,
        "contentType": "application/vnd.kubernetes.protobuf",
    }
    assert sorted(w.path for w in warnings) == [
        "clientConnection.burst",
        "leaderElection.leaseDuration",
        "leaderElection.retryPeriod",
    ]
    assert config["leaderElection"]["retryPeriod"] == "0s"  # the input is not modified


def test_two_profiles_get_no_default_scheduler_name() -> None:
    defaulted, _ = apply_defaults({"profiles": [{}, {"schedulerName": "b"}]})
    assert "schedulerName" not in defaulted["profiles"][0]


def test_one_registry_of_args_kinds_with_a_schema_each() -> None:
    for kind, entry in ARGS_KINDS.items():
        assert entry.kind == kind
        assert schemas.load_schema(entry.schema_path)["title"] == kind
        assert kind in PLUGIN_ARGS_KINDS[entry.plugin]
    assert PLUGIN_ARGS_KINDS["NodeResourcesFitPlus"] == ("NodeResourcesFitPlusArgs", "ResourceTypesArgs")
    assert not ARGS_KINDS["DynamicResourcesArgs"].exists_in(Release(33))
