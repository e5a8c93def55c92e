"""Builds of the out-of-tree schedulers: the tables, the projects' shipped configurations under the build
they were written for, and what one build refuses that another has (``--scheduler NAME@VERSION``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from limitguard.schedcfg import validate_text
from limitguard.schedcfg.args import koordinator, sigs
from limitguard.schedcfg.schedulers import (
    BUILDS,
    SCHEDULERS,
    SchedulerChoiceError,
    resolve,
    resolve_leniently,
)
from tests.support import FIXTURES, REPO
from tests.unit.schedcfg.sigs_helpers import NODE_METADATA_ARGS

KOORD_V1_7, KOORD_V1_8, KOORD_MAIN = (f"koord-scheduler@{v}" for v in ("v1.7.0", "v1.8.0", "main"))
SIGS_V0_33, SIGS_V0_34, SIGS_MAIN = (f"scheduler-plugins@{v}" for v in ("v0.33.5", "v0.34.7", "main"))


# ------------------------------------------------------------------------------------------- the tables
def test_every_build_names_its_commit_date_and_kubernetes_minor() -> None:
    facts = {
        spec: (s.build.kubernetes_minor, s.build.commit[:8], s.build.date)
        for spec, s in BUILDS.items()
        if s.build is not None
    }
    assert facts == {
        KOORD_V1_7: (28, "a47133ac", "2025-10-23"),
        KOORD_V1_8: (35, "989ca85c", "2026-04-16"),
        KOORD_MAIN: (35, "a7a1b76b", "2026-07-24"),
        SIGS_V0_33: (33, "c595039e", "2025-10-27"),
        SIGS_V0_34: (34, "8283b145", "2026-04-20"),
        SIGS_MAIN: (35, "903da7df", "2026-08-16"),
    }
    assert all(re.fullmatch("[0-9a-f]{40}", s.build.commit) for s in BUILDS.values() if s.build)


def test_a_name_alone_is_the_newest_release() -> None:
    assert SCHEDULERS["koord-scheduler"] is BUILDS[KOORD_V1_8] is resolve("koord-scheduler")
    assert SCHEDULERS["scheduler-plugins"] is BUILDS[SIGS_V0_34] is resolve("scheduler-plugins")
    assert resolve("auto") is None
    assert resolve("koord-scheduler@1.7.0") is BUILDS[KOORD_V1_7]
    assert resolve("scheduler-plugins@master") is BUILDS[SIGS_MAIN]  # upstream's name of its branch


def test_what_changed_from_one_koordinator_build_to_the_next() -> None:
    """v1.8.0: SchedulingHintArgs registered, Coscheduling gains PreScore and Score, eight fields;
    main: three ReservationArgs fields."""
    v17, v18, main = koordinator.BUILDS
    assert {e.kind for e in v18.kinds} - {e.kind for e in v17.kinds} == {"SchedulingHintArgs"}
    assert {n for n in v18.plugins if v18.plugins[n] != v17.plugins.get(n)} == {"Coscheduling"}
    assert v18.plugins["Coscheduling"] - v17.plugins["Coscheduling"] == {"preScore", "score"}
    assert sum(len(fields) for fields in v18.fields_added.values()) == 8
    assert (main.kinds, main.plugins) == (v18.kinds, v18.plugins)
    assert set(main.fields_added["ReservationArgs"]) == {
        "ignoredResources",
        "ignoredResourceGroups",
        "reservationSelectorIndex",
    }


def test_what_changed_from_one_scheduler_plugins_build_to_the_next() -> None:
    v33, v34, main = sigs.BUILDS
    assert (v34.kinds, v34.plugins) == (v33.kinds, v33.plugins)
    assert v34.fields_added == {"CoschedulingArgs": {"podGroupRejectPercentage": "v0.34.4-rc"}}
    assert set(main.plugins) - set(v34.plugins) == {"NodeMetadata"}
    assert main.plugins["NodeResourceTopologyMatch"] - v34.plugins["NodeResourceTopologyMatch"] == {
        "preFilter"
    }
    assert {e.kind for e in main.kinds} - {e.kind for e in v34.kinds} == {"NodeMetadataArgs"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("koord-scheduler@v1.9.0", "limitguard has no table for this build"),
        ("scheduler-plugins@v0.34.1-devel", "known: scheduler-plugins@v0.33.5"),
        ("kube-scheduler@1.30", "is not supported; supported: 1.31-1.37"),
        ("volcano", "unknown scheduler"),
        ("auto@v1", "unknown scheduler"),
        ("koord-scheduler@", "unknown scheduler"),
    ],
)
def test_unknown_builds_are_refused_with_what_is_known(text: str, problem: str) -> None:
    with pytest.raises(SchedulerChoiceError, match=re.escape(problem)):
        resolve(text)


def test_a_server_takes_the_newest_release_for_an_unknown_version() -> None:
    scheduler, note = resolve_leniently("koord-scheduler@v1.9.0")
    assert scheduler is BUILDS[KOORD_V1_8]
    assert note == "koord-scheduler@v1.9.0: unknown build, v1.8.0 applies (known: v1.7.0, v1.8.0, main)"
    with pytest.raises(SchedulerChoiceError):
        resolve_leniently("volcano@v1")


# ---------------------------------------------------------------- shipped configurations, per build
SHIPPED: dict[str, list[str]] = {
    KOORD_V1_7: ["koordinator-v1.7.0/config-manager-scheduler-config.yaml"],
    KOORD_V1_8: [
        "koordinator/config-manager-scheduler-config.yaml",
        "koordinator/charts-koord-scheduler-config.rendered.yaml",
        "koordinator/charts-koord-scheduler-config-minimal.rendered.yaml",
        "koordinator-helm/koord-scheduler-config.rendered.yaml",
    ],
    # config/manager/scheduler-config.yaml at a7a1b76b (tests/fixtures/SOURCES.md)
    KOORD_MAIN: ["schedcfg-v1-configmap-koord-scheduler.koordinator-config-manager.yaml"],
    # the v1 manifests and the chart's ConfigMap are the same at v0.33.5, v0.34.7 and master (903da7df,
    # where the schedcfg-v1-* copies were taken)
    SIGS_V0_33: [
        *(f"scheduler-plugins/{p.name}" for p in sorted((FIXTURES / "scheduler-plugins").glob("*.yaml"))),
        "schedcfg-v1-capacityscheduling.scheduler-plugins.yaml",
        "schedcfg-v1-coscheduling.scheduler-plugins.yaml",
        "schedcfg-v1-noderesourcesallocatable.scheduler-plugins.yaml",
    ],
    SIGS_MAIN: ["schedcfg-v1-multidoc-nodemetadata.scheduler-plugins.yaml"],
}
SHIPPED[KOORD_V1_7].append("koordinator-v1.7.0/charts-koord-scheduler-config.rendered.yaml")
SHIPPED[SIGS_V0_34] = SHIPPED[SIGS_V0_33]
SHIPPED[SIGS_MAIN] += SHIPPED[SIGS_V0_33]
#: True warnings the projects' own files carry (none so far), each named: (file, rule).
TRUE_WARNINGS: set[tuple[str, str]] = set()
CASES = [(spec, name) for spec, names in SHIPPED.items() for name in names]


@pytest.mark.parametrize(("spec", "name"), CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_shipped_configurations_are_strict_clean_under_their_build(spec: str, name: str) -> None:
    path: Path = FIXTURES / name
    report = validate_text(path.read_text(encoding="utf-8"), name, scheduler=spec)
    assert report.errors == [], report.format()
    assert {(name, f.rule) for f in report.warnings} <= TRUE_WARNINGS, report.format()
    assert {r.build_name for r in report.readers} == {BUILDS[spec].build_name}


def test_v1_8_configuration_under_v1_7_is_refused_naming_v1_8() -> None:
    """Koordinator v1.8.0's config-manager file enables Coscheduling at preScore and score, which
    v1.7.0's Coscheduling does not implement: koord-scheduler v1.7.0 refuses to start with it."""
    name = "koordinator/config-manager-scheduler-config.yaml"
    report = validate_text((FIXTURES / name).read_text(encoding="utf-8"), name, scheduler=KOORD_V1_7)
    assert [(f.path.rsplit(".", 3)[-3:], f.rule) for f in report.errors] == [
        (["plugins", "preScore", "enabled[1]"], "plugins.extension-point"),
        (["plugins", "score", "enabled[4]"], "plugins.extension-point"),
    ]
    assert all("--scheduler koord-scheduler@v1.8.0" in f.message for f in report.errors)
    assert "built on Kubernetes 1.28" in report.readers[0].reason


def test_a_later_builds_plugin_and_extension_point_name_the_build() -> None:
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "s",
                "plugins": {
                    "preFilter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
                    "score": {"enabled": [{"name": "NodeMetadata"}]},
                },
                "pluginConfig": [{"name": "NodeMetadata", "args": NODE_METADATA_ARGS}],
            }
        ],
    }
    text = json.dumps(document)
    released = validate_text(text, scheduler=SIGS_V0_34)
    assert [f.rule for f in released.errors] == ["plugins.extension-point", "plugins.unknown"]
    assert all("choose it with --scheduler scheduler-plugins@main" in f.message for f in released.errors)
    assert validate_text(text, scheduler=SIGS_MAIN).errors == []


def test_detection_takes_the_newest_release_and_says_so() -> None:
    name = "koordinator-v1.7.0/config-manager-scheduler-config.yaml"
    report = validate_text((FIXTURES / name).read_text(encoding="utf-8"), name)
    (reader,) = report.readers
    assert (reader.scheduler, reader.build_name) == ("koord-scheduler", "v1.8.0")
    assert "its newest release v1.8.0 applies" in reader.reason
    assert "--scheduler koord-scheduler@VERSION" in reader.reason


def test_every_added_field_is_in_the_newest_schema_and_says_since_when() -> None:
    """The schemas describe the newest build of a kind (an editor accepts each field); a field an older
    build lacks names the first tag that has it, or the main branch."""
    checked = 0
    for scheduler in (SCHEDULERS["koord-scheduler"], SCHEDULERS["scheduler-plugins"]):
        newest = {e.kind: e for e in scheduler.builds[-1].kinds}
        for build in scheduler.builds:
            for kind, fields in build.fields_added.items():
                schema = json.loads(
                    (REPO / "webhook" / "limitguard" / "schemas" / newest[kind].schema_path).read_text()
                )
                for name, since in fields.items():
                    description = schema["properties"][name]["description"]
                    assert since in description or "main" in description, (kind, name)
                    checked += 1
    assert checked == 13  # Koordinator: 8 in v1.8.0, 3 on main; scheduler-plugins: 1 in v0.34.7, 1 on main


def test_v1beta3_under_a_build_on_1_28_is_a_warning_that_nothing_was_checked() -> None:
    """koord-scheduler v1.7.0 (Kubernetes 1.28) still serves v1beta3 (gone in 1.29); v1beta2 it does not."""
    beta3 = "schedcfg-v1beta3-reservationargs-preemption-typo-pluginConfigs.koordinator-website.yaml"
    report = validate_text((FIXTURES / beta3).read_text(encoding="utf-8"), beta3, scheduler=KOORD_V1_7)
    assert report.errors == [] and [f.rule for f in report.warnings] == ["config.api-version-unchecked"]
    assert "koord-scheduler v1.7.0 (built on Kubernetes 1.28)" in report.warnings[0].message
    assert not validate_text((FIXTURES / beta3).read_text(encoding="utf-8"), scheduler=KOORD_V1_8).ok
    beta2 = "schedcfg-v1beta2-configmap-koord-scheduler.koordinator-config-manager.yaml"
    old = validate_text((FIXTURES / beta2).read_text(encoding="utf-8"), beta2, scheduler=KOORD_V1_7)
    assert [f.rule for f in old.errors] == ["config.api-version-not-served"]
