"""Args of an out-of-tree plugin the profile does not enable (issue 28, follow-up 1).

scheduler-plugins v0.34.7 and Koordinator v1.8.0 validate their args in each plugin's New
(pkg/coscheduling/coscheduling.go:75, pkg/noderesources/allocatable.go:95 at v0.34.7;
pkg/scheduler/plugins/elasticquota/plugin.go:122 at v1.8.0): a plugin no extension point enables is
never constructed, so its args' rule errors do not stop the scheduler. The strict decode at load does.
kube-scheduler validates its own kinds at load (pkg/scheduler/apis/config/validation): unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from limitguard.schedcfg.report import Report
from tests.unit.schedcfg.helpers import check, config

ARGS0 = "profiles[0].pluginConfig[0].args"
BAD_ALLOCATABLE = {"kind": "NodeResourcesAllocatableArgs", "resources": [{"name": "cpu"}]}
FIRST = "args.resources[0].weight: Invalid value: 0: resource weight of cpu should be a positive value"


def run(scheduler: str, plugin: str, args: dict[str, Any], plugins: dict[str, Any] | None = None) -> Report:
    profile: dict[str, Any] = {"schedulerName": "s", "pluginConfig": [{"name": plugin, "args": args}]}
    if plugins is not None:
        profile["plugins"] = plugins
    return check(config(profiles=[profile]), scheduler=scheduler)


def of(report: Report, severity: str) -> list[str]:
    return [str(f) for f in report.findings if f.severity == severity]


def test_rule_errors_of_an_unenabled_plugin_become_one_warning() -> None:
    report = run("scheduler-plugins", "NodeResourcesAllocatable", BAD_ALLOCATABLE)
    assert of(report, "error") == []
    unused = [f for f in report.findings if f.rule == "args.unused-plugin"]
    assert len(unused) == 1 and unused[0].severity == "warning" and unused[0].path == ARGS0
    assert "not enabled in this profile" in unused[0].message
    assert "these args are unused; they would fail once it is enabled" in unused[0].message
    assert FIRST.replace("args.", f"{ARGS0}.") in unused[0].message


@pytest.mark.parametrize(
    "plugins",
    [
        {"score": {"enabled": [{"name": "NodeResourcesAllocatable"}]}},
        {"multiPoint": {"enabled": [{"name": "NodeResourcesAllocatable"}]}},
        # disabled at the one point it implements: still enabled by multiPoint, so still constructed
        {
            "multiPoint": {"enabled": [{"name": "NodeResourcesAllocatable"}]},
            "score": {"disabled": [{"name": "NodeResourcesAllocatable"}]},
        },
        # enabled at a point; disabled in multiPoint only removes defaults
        {
            "score": {"enabled": [{"name": "NodeResourcesAllocatable"}]},
            "multiPoint": {"disabled": [{"name": "*"}]},
        },
    ],
)
def test_an_enabled_plugin_keeps_its_errors(plugins: dict[str, Any]) -> None:
    report = run("scheduler-plugins", "NodeResourcesAllocatable", BAD_ALLOCATABLE, plugins)
    assert [e for e in of(report, "error") if "resource weight of cpu" in e]
    assert not [f for f in report.findings if f.rule == "args.unused-plugin"]


def test_enabled_in_another_profile_does_not_count() -> None:
    enabled = {
        "schedulerName": "a",
        "plugins": {"score": {"enabled": [{"name": "NodeResourcesAllocatable"}]}},
    }
    unused = {
        "schedulerName": "b",
        "pluginConfig": [{"name": "NodeResourcesAllocatable", "args": BAD_ALLOCATABLE}],
    }
    report = check(config(profiles=[enabled, unused]), scheduler="scheduler-plugins")
    assert of(report, "error") == []
    assert [f.path for f in report.findings if f.rule == "args.unused-plugin"] == [
        "profiles[1].pluginConfig[0].args"
    ]


def test_decode_errors_stay_errors_when_unenabled() -> None:
    """Unknown fields and wrong types fail the strict decode at load, for every pluginConfig entry."""
    report = run("scheduler-plugins", "NodeResourcesAllocatable", {**BAD_ALLOCATABLE, "weigth": 1})
    assert [e for e in of(report, "error") if "weigth" in e]
    report = run("scheduler-plugins", "NodeResourcesAllocatable", {"resources": "cpu"})
    assert of(report, "error")


def test_koordinator_plugins_too() -> None:
    hook = {
        "kind": "ElasticQuotaArgs",
        "hookPlugins": [{"key": "limit", "factoryKey": "quota-limiter", "factoryArgs": "{}"}],
    }
    unenabled = run("koord-scheduler", "ElasticQuota", hook)
    assert of(unenabled, "error") == []
    assert [f.rule for f in unenabled.findings if f.severity == "warning"].count("args.unused-plugin") == 1
    enabled = run(
        "koord-scheduler", "ElasticQuota", hook, {"multiPoint": {"enabled": [{"name": "ElasticQuota"}]}}
    )
    assert of(enabled, "error")


def test_in_tree_kinds_are_validated_at_load_by_every_reader() -> None:
    fit = {"kind": "NodeResourcesFitArgs", "scoringStrategy": {"type": "MostAlocated"}}
    plugins = {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}
    for scheduler in ("kube-scheduler", "koord-scheduler", "scheduler-plugins"):
        report = run(scheduler, "NodeResourcesFit", fit, plugins)
        assert of(report, "error"), scheduler
        assert not [f for f in report.findings if f.rule == "args.unused-plugin"]


# ------------------------------------------------- enabled without pluginConfig: the default args (item 2)
def peaks(plugin_config: list[dict[str, Any]]) -> Report:
    profile = {
        "schedulerName": "s",
        "plugins": {"score": {"enabled": [{"name": "Peaks"}]}},
        "pluginConfig": plugin_config,
    }
    return check(config(profiles=[profile]), scheduler="scheduler-plugins")


def test_peaks_enabled_without_args_does_not_start() -> None:
    """Peaks' kind is registered into kube-scheduler's v1 SchemeBuilder (apis/config/v1/register.go at
    v0.34.7), so defaults.go appends a defaulted PeaksArgs; its empty watcherAddress fails in New."""
    found = [f for f in peaks([]).findings if f.rule == "args.default-args"]
    assert len(found) == 1 and found[0].severity == "error"
    assert found[0].path == "profiles[0].pluginConfig"
    assert 'plugin "Peaks" is enabled without a pluginConfig entry' in found[0].message
    assert "WatcherAddress: Required value" in found[0].message
    given = peaks([{"name": "Peaks", "args": {"kind": "PeaksArgs", "watcherAddress": "http://lw:2020"}}])
    assert not [f for f in given.findings if f.rule == "args.default-args"]


def test_default_args_that_validate_say_nothing() -> None:
    for scheduler, plugin in (("scheduler-plugins", "Coscheduling"), ("koord-scheduler", "ElasticQuota")):
        profile = {"schedulerName": "s", "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}}}
        report = check(config(profiles=[profile]), scheduler=scheduler)
        assert not [f for f in report.findings if f.rule == "args.default-args"], scheduler


# ------------------------------------------------------------ args for a plugin without a kind (item 3)
@pytest.mark.parametrize(
    ("scheduler", "plugin"),
    [
        ("scheduler-plugins", "CapacityScheduling"),
        ("scheduler-plugins", "PodState"),
        ("scheduler-plugins", "QOSSort"),
        ("koord-scheduler", "DefaultPreBind"),
    ],
)
def test_args_of_a_plugin_without_kind_are_ignored(scheduler: str, plugin: str) -> None:
    """decodeNestedObjects skips a plugin whose <Name>Args is not registered; New ignores runtime.Unknown."""
    report = run(scheduler, plugin, {"whatever": 1})
    assert of(report, "error") == []
    found = [f for f in report.findings if f.path == ARGS0]
    assert [(f.severity, f.rule) for f in found] == [("warning", "args.ignored")]
    assert f'plugin "{plugin}" takes no args' in found[0].message and "ignores them" in found[0].message


def test_a_foreign_plugin_stays_an_info_note() -> None:
    report = run("scheduler-plugins", "SomeoneElsesPlugin", {"whatever": 1})
    assert [(f.severity, f.rule) for f in report.findings if f.path == ARGS0] == [
        ("info", "args.unknown-plugin")
    ]


# ------------------------------------------ NodeResourceTopologyMatch's resync cache needs reserve (item 4)
NRT_ARGS = {"kind": "NodeResourceTopologyMatchArgs", "cacheResyncPeriodSeconds": 5}


def nrt_rule(plugins: dict[str, Any], args: dict[str, Any] = NRT_ARGS) -> list[Any]:
    report = run("scheduler-plugins", "NodeResourceTopologyMatch", args, plugins)
    return [f for f in report.findings if f.rule == "sigs.topologymatch.cache-needs-reserve"]


def test_resync_cache_without_reserve_is_a_warning() -> None:
    found = nrt_rule({"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}})
    assert [(f.severity, f.path) for f in found] == [("warning", f"{ARGS0}.cacheResyncPeriodSeconds")]
    assert "needs NodeResourceTopologyMatch enabled at reserve" in found[0].message


@pytest.mark.parametrize(
    ("plugins", "args"),
    [
        ({"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}, NRT_ARGS),
        (
            {
                "filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
                "reserve": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
            },
            NRT_ARGS,
        ),
        ({"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}, {"cacheResyncPeriodSeconds": 0}),
        (
            {"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
            {**NRT_ARGS, "discardReservedNodes": True},
        ),
        ({}, NRT_ARGS),  # not enabled at all: unused args, nothing to say about reserve
    ],
)
def test_resync_cache_with_reserve_or_without_cache_says_nothing(
    plugins: dict[str, Any], args: dict[str, Any]
) -> None:
    assert nrt_rule(plugins, args) == []


def test_resync_cache_disabled_at_reserve_is_a_warning() -> None:
    plugins = {
        "multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
        "reserve": {"disabled": [{"name": "NodeResourceTopologyMatch"}]},
    }
    assert len(nrt_rule(plugins)) == 1
