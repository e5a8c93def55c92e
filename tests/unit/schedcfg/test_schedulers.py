"""The scheduler that reads the file: each scheduler's in-tree release, plugins, args kinds and rules.

Sources: koordinator-sh/koordinator v1.8.0 (cmd/koord-scheduler/main.go; the plugins' methods under
pkg/scheduler/plugins/; pkg/scheduler/apis/config/v1/types.go for NodeResourcesFitPlusArgs and
ScarceResourceAvoidanceArgs, which have no defaulting or validation there or on main), Koordinator PR
#1486 (commit 9ddd4fb2: SetDefaults_LimitAwareArgs, ValidateLimitAwareArgs), Koordinator PR #2417
(Coscheduling without QueueSort), koordinator-sh/charts versions/v1.8.0 and kubernetes-sigs/scheduler-plugins
v0.34.7 (manifests/, tests/fixtures/scheduler-plugins/PROVENANCE.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from limitguard.cli.validate import main as validate_main
from limitguard.schedcfg import validate_text
from limitguard.schedcfg.args.registry import registry_for
from limitguard.schedcfg.report import Report
from limitguard.schedcfg.schedulers import BUILDS, SCHEDULERS
from limitguard.schedcfg.tables.releases import Release
from tests.support import REPO
from tests.unit.schedcfg.helpers import check, config

KOORD = "koord-scheduler"
SIGS = "scheduler-plugins"
ARGS0 = "profiles[0].pluginConfig[0].args"
HELM = REPO / "tests/fixtures/koordinator-helm/koord-scheduler-config.rendered.yaml"
CONFIG_MANAGER = REPO / "tests/fixtures/schedcfg-v1-configmap-koord-scheduler.koordinator-config-manager.yaml"
SIGS_MANIFESTS = sorted((REPO / "tests/fixtures/scheduler-plugins").glob("*.yaml"))


def findings(report: Report, *severities: str) -> list[str]:
    return [str(f) for f in report.findings if f.severity in (severities or ("error", "warning"))]


def koord(profile: dict[str, Any]) -> Report:
    return check(config(profiles=[{"schedulerName": "koord-scheduler", **profile}]), scheduler=KOORD)


def fit_plus(args: dict[str, Any], scheduler: str = KOORD) -> Report:
    profile = {
        "schedulerName": "s",
        "pluginConfig": [
            {"name": "NodeResourcesFitPlus", "args": {"kind": "NodeResourcesFitPlusArgs", **args}}
        ],
        "plugins": {"score": {"enabled": [{"name": "NodeResourcesFitPlus"}]}},
    }
    return check(config(profiles=[profile]), scheduler=scheduler)


# -------------------------------------------------------------------------------------------- the table
def test_each_scheduler_fixes_the_kubernetes_release_of_its_in_tree_part() -> None:
    cluster = Release(37)
    assert SCHEDULERS[KOORD].reader_for(cluster).release.minor == 35
    assert SCHEDULERS[SIGS].reader_for(cluster).release.minor == 34
    assert SCHEDULERS["kube-scheduler"].reader_for(Release(33)).release.minor == 33
    assert {s.reader_for(cluster).scheduler.spec for s in SCHEDULERS.values()} == {
        "kube-scheduler",
        "koord-scheduler@v1.8.0",
        "scheduler-plugins@v0.34.7",
    }
    assert BUILDS["koord-scheduler@main"].reader_for(cluster).release.minor == 35
    assert BUILDS["scheduler-plugins@v0.33.5"].reader_for(cluster).release.minor == 33
    assert BUILDS["scheduler-plugins@main"].reader_for(cluster).release.minor == 35


def test_a_build_on_a_minor_older_than_the_tables_is_judged_by_the_oldest_and_says_so() -> None:
    """koord-scheduler v1.7.0 is built on Kubernetes 1.28 (go.mod k8s.io/kubernetes v1.28.7)."""
    reader = BUILDS["koord-scheduler@v1.7.0"].reader_for(Release(37))
    assert reader.release.minor == 31
    assert reader.label == "koord-scheduler v1.7.0 (Kubernetes 1.28, judged by the rules of 1.31)"


def test_two_projects_register_coscheduling_with_different_points() -> None:
    koord_points = SCHEDULERS[KOORD].reader_for(Release()).registered_plugins()["Coscheduling"]
    sigs_points = SCHEDULERS[SIGS].reader_for(Release()).registered_plugins()["Coscheduling"]
    assert koord_points is not None and "queueSort" not in koord_points and "preEnqueue" in koord_points
    assert sigs_points is not None and "queueSort" in sigs_points


def test_registries_are_per_scheduler() -> None:
    kube = registry_for(SCHEDULERS["kube-scheduler"])
    koord_registry = registry_for(SCHEDULERS[KOORD])
    sigs_registry = registry_for(SCHEDULERS[SIGS])
    assert "NodeResourcesFitArgs" in kube.kinds and "NodeResourcesFitArgs" in koord_registry.kinds
    assert "NodeResourcesAllocatableArgs" in sigs_registry.kinds
    assert "NodeResourcesAllocatableArgs" not in koord_registry.kinds
    assert koord_registry.kinds["NodeResourcesFitPlusArgs"] is not kube.kinds["NodeResourcesFitPlusArgs"]


# --------------------------------------------------------------------------- real configurations: clean
def test_koordinator_helm_chart_configmap_has_no_finding_under_koord_scheduler() -> None:
    text = HELM.read_text()
    for scheduler in ("auto", KOORD):
        report = validate_text(text, scheduler=scheduler)
        assert report.passes(strict=True), findings(report)
        assert findings(report, "error", "warning", "info") == []  # every args kind decoded and checked
        assert [(r.scheduler, r.kubernetes, r.certain) for r in report.readers] == [(KOORD, "1.35", True)]
    # kube-scheduler's own view of the same file: 26 "not in-tree" plugins and the Reservation weight
    kube = validate_text(text, scheduler="kube-scheduler")
    assert {f.rule for f in kube.warnings} == {"plugins.out-of-tree", "score.dominant-weight"}
    reservation = next(f for f in kube.warnings if f.value == "Reservation")
    assert "koord-scheduler registers it: name the scheduler with --scheduler" in reservation.message


def test_koordinator_helm_chart_configmap_passes_validate_strict(capsys) -> None:
    assert validate_main(["--strict", str(HELM)]) == 0
    assert validate_main(["--strict", "--scheduler", "kube-scheduler", str(HELM)]) == 1
    capsys.readouterr()


def test_koordinator_kustomize_configmap_has_no_finding_under_koord_scheduler() -> None:
    report = validate_text(CONFIG_MANAGER.read_text())
    assert report.readers[0].scheduler == KOORD and findings(report) == []


@pytest.mark.parametrize("path", SIGS_MANIFESTS, ids=lambda p: p.name)
def test_scheduler_plugins_manifests_have_no_finding_under_their_scheduler(path) -> None:
    report = validate_text(path.read_text(), scheduler=SIGS)
    assert findings(report, "error", "warning", "info") == []
    detected = validate_text(path.read_text())
    # Coscheduling alone cannot tell scheduler-plugins from koord-scheduler
    expected = (SIGS, True) if "coscheduling" not in path.name else ("kube-scheduler", False)
    assert {(r.scheduler, r.certain) for r in detected.readers} == {expected}


# ------------------------------------------------------------------------------------- koord-scheduler
def test_reservation_weight_5000_is_koord_schedulers_design() -> None:
    profile = {
        "plugins": {
            "score": {"enabled": [{"name": "Reservation", "weight": 5000}, {"name": "LoadAwareScheduling"}]}
        }
    }
    assert findings(koord(profile)) == []
    kube = check(config(profiles=[{"schedulerName": "s", **profile}]), scheduler="kube-scheduler")
    assert "score.dominant-weight" in {f.rule for f in kube.warnings}


def test_koordinator_coscheduling_through_multipoint_adds_no_queue_sort() -> None:
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}}
    assert findings(koord(profile)) == []
    sigs = check(config(profiles=[{"schedulerName": "s", **profile}]), scheduler=SIGS)
    assert [f.rule for f in sigs.errors] == ["queue-sort.exactly-one"]


def test_koord_scheduler_refuses_coscheduling_as_queue_sort() -> None:
    report = koord(
        {"plugins": {"queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}
    )
    assert [f.rule for f in report.errors] == ["plugins.extension-point"]


def test_a_plugin_koord_scheduler_does_not_register_is_an_error() -> None:
    report = koord({"plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}]}}})
    assert [(f.rule, f.path) for f in report.errors] == [
        ("plugins.unknown", "profiles[0].plugins.score.enabled[0]")
    ]
    assert "koord-scheduler v1.8.0 does not register" in report.errors[0].message


def test_in_tree_rules_are_those_of_kubernetes_1_35_under_koord_scheduler() -> None:
    """TopologyPlacementGenerator and the placementGenerate point arrive in Kubernetes 1.36: fine for
    kube-scheduler 1.37, not for koord-scheduler v1.8.0 even on a 1.37 cluster."""
    for plugins, message in (
        (
            {"multiPoint": {"enabled": [{"name": "TopologyPlacementGenerator"}]}},
            "koord-scheduler v1.8.0 (Kubernetes 1.35) does not have it",
        ),
        (
            {"placementGenerate": {"enabled": [{"name": "TopologyPlacementGenerator"}]}},
            "koord-scheduler v1.8.0 (Kubernetes 1.35) fails with a strict decoding error",
        ),
    ):
        doc = config(profiles=[{"schedulerName": "s", "plugins": plugins}])
        assert check(doc, scheduler="kube-scheduler").ok
        errors = check(doc, scheduler=KOORD).errors
        assert errors and all(message in f.message for f in errors[:1]), [str(f) for f in errors]


def test_limit_aware_weight_zero_is_defaulted_to_one_with_a_warning() -> None:
    profile = {
        "pluginConfig": [{"name": "LimitAware", "args": {"scoringResourceWeights": {"cpu": 0, "memory": 1}}}],
        "plugins": {"score": {"enabled": [{"name": "LimitAware"}]}},
    }
    report = koord(profile)
    assert report.ok
    assert [(f.path, f.message) for f in report.warnings] == [
        (
            f"{ARGS0}.scoringResourceWeights.cpu",
            "weight 0 is defaulted to 1 (LimitAware's defaulting treats 0 as unset)",
        )
    ]
    assert [f.rule for f in report.infos] == ["plugins.unreleased"]
    assert "no koord-scheduler build registers LimitAware" in report.infos[0].message


@pytest.mark.parametrize("weight", [-1, 101])
def test_limit_aware_weights_outside_1_to_100_are_errors(weight: int) -> None:
    profile = {
        "pluginConfig": [{"name": "LimitAware", "args": {"scoringResourceWeights": {"cpu": weight}}}],
        "plugins": {"score": {"enabled": [{"name": "LimitAware"}]}},
    }
    assert [f.path for f in koord(profile).errors] == [f"{ARGS0}.scoringResourceWeights.cpu"]


def test_resource_types_args_is_an_error_naming_the_kind_koord_scheduler_decodes() -> None:
    report = fit_plus(
        {"kind": "ResourceTypesArgs", "resources": {"cpu": {"type": "LeastAllocated", "weight": 1}}}
    )
    assert [f.path for f in report.errors] == [f"{ARGS0}.kind"]
    assert '"NodeResourcesFitPlusArgs"' in report.errors[0].message
    # limitguard's extender reads both kinds
    assert fit_plus(
        {"kind": "ResourceTypesArgs", "resources": {"cpu": {"type": "LeastAllocated", "weight": 1}}},
        scheduler="kube-scheduler",
    ).passes(strict=True)


def test_fit_plus_weight_above_100_changes_nothing_for_koord_scheduler() -> None:
    assert fit_plus({"resources": {"cpu": {"type": "MostAllocated", "weight": 500}}}).passes(strict=True)


def test_fit_plus_decoding_stays_strict_under_koord_scheduler() -> None:
    report = fit_plus({"resources": {"cpu": {"type": "MostAllocated", "weight": 1, "wieght": 2}}, "extra": 1})
    assert sorted(f.path for f in report.errors) == [f"{ARGS0}.extra", f"{ARGS0}.resources.cpu.wieght"]
    assert [f.path for f in fit_plus({"resources": {"cpu": {"type": 1, "weight": "1"}}}).errors] == [
        f"{ARGS0}.resources.cpu.type",
        f"{ARGS0}.resources.cpu.weight",
    ]


def test_json_output_carries_the_scheduler_and_why() -> None:
    report = validate_text(HELM.read_text())
    readers = report.to_dict()["schedulers"]
    assert [r["scheduler"] for r in readers] == [KOORD]
    assert readers[0]["kubernetesVersion"] == "1.35" and "Reservation" in readers[0]["reason"]
    assert json.dumps(readers)  # plain JSON


HOSTILE_VALUES: list[Any] = [None, True, -1, 2**70, 1.5, "x", [], {}, [None, {"a": []}], {"": {"": None}}]


@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
def test_any_args_of_any_kind_yield_findings_never_an_exception(scheduler: str) -> None:
    """Every kind of every scheduler's registry, every field set to values of the wrong shape."""
    registry = registry_for(SCHEDULERS[scheduler])
    for entry in registry.kinds.values():
        for value in HOSTILE_VALUES:
            fields = {"resources": value, "scoringResourceWeights": value, "kind": entry.kind, "x": value}
            profile = {"schedulerName": "s", "pluginConfig": [{"name": entry.plugin, "args": fields}]}
            report = check(config(profiles=[profile]), scheduler=scheduler)
            assert report.errors, (entry.kind, value)  # "x" is never a field: strict decoding


def test_scheduler_plugins_manifests_pass_validate_strict(capsys) -> None:
    files = [str(path) for path in SIGS_MANIFESTS]
    assert len(files) >= 9
    assert validate_main(["--strict", *files]) == 0
    assert validate_main(["--strict", "--scheduler", "scheduler-plugins", *files]) == 0
    capsys.readouterr()
