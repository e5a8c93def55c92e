"""Per-release tables, feature gates, v1 defaulting and the args registry (issue 15)."""

from __future__ import annotations

import pytest
from limitguard.schedcfg import schemas
from limitguard.schedcfg.args import ARGS_KINDS, PLUGIN_ARGS_KINDS
from limitguard.schedcfg.rules.defaults import apply_defaults
from limitguard.schedcfg.rules.framework import effective_point, merged_multipoint, near_miss
from limitguard.schedcfg.rules.plugin_tables import default_plugins, in_tree_plugins
from limitguard.schedcfg.rules.releases import (
    Release,
    ReleaseError,
    parse_feature_gates,
    parse_version,
    release_for,
)


@pytest.mark.parametrize(
    ("text", "minor"), [("1.31", 31), ("v1.33", 33), ("v1.35.2", 35), ("1.34.0-gke.1", 34)]
)
def test_versions_parse(text: str, minor: int) -> None:
    assert parse_version(text) == minor


@pytest.mark.parametrize("text", ["1.30", "1.36", "2.0", "latest", ""])
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
    assert release_for("1.35", "DRADeviceBindingConditions=true").enabled("DRADeviceBindingConditions")
    assert not Release(32).enabled("DRAResourceClaimDeviceStatus") and Release(33).enabled(
        "DRAResourceClaimDeviceStatus"
    )


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


def test_every_default_plugin_is_registered_in_its_release() -> None:
    for minor in (31, 32, 33, 34, 35):
        assert set(names(minor)) <= set(in_tree_plugins(Release(minor)))
    assert "CinderLimits" in in_tree_plugins(Release(31)) and "CinderLimits" not in in_tree_plugins(
        Release(32)
    )


def test_multipoint_merge_keeps_the_place_of_a_reconfigured_default() -> None:
    profile = {
        "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}, {"name": "Mine"}]}}
    }
    merged = merged_multipoint(profile, Release(35))
    order = [p["name"] for p in merged]
    assert order.index("NodeResourcesFit") == names(35).index("NodeResourcesFit") and order[-1] == "Mine"
    assert next(p for p in merged if p["name"] == "NodeResourcesFit")["weight"] == 5


def test_effective_points_follow_the_extension_point_table() -> None:
    assert effective_point({}, "queueSort", Release(35)) == ["PrioritySort"]
    assert effective_point({}, "bind", Release(35)) == ["DefaultBinder"]
    assert "NodePorts" not in effective_point({}, "score", Release(35))
    disabled = {"plugins": {"score": {"disabled": [{"name": "*"}]}}}
    assert effective_point(disabled, "score", Release(35)) == []


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
