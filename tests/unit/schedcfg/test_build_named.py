"""Every finding of an out-of-tree args rule names the build the file is judged for, not the newest release.

The same bad file runs under each tabled build of koord-scheduler (v1.7.0, v1.8.0, main) and of
scheduler-plugins (v0.33.5, v0.34.7, main); each message that names the scheduler names that build and
no other. The CLI shows the same names, in text and in ``-o json``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from limitguard.cli.validate import main as validate_main
from limitguard.schedcfg.report import Report
from tests.unit.schedcfg.helpers import check, config

#: --scheduler value -> how findings name that build.
KOORD_BUILDS = {
    "koord-scheduler@v1.7.0": "koord-scheduler v1.7.0",
    "koord-scheduler@v1.8.0": "koord-scheduler v1.8.0",
    "koord-scheduler@main": "koord-scheduler main (a7a1b76b)",
}
SIGS_BUILDS = {
    "scheduler-plugins@v0.33.5": "scheduler-plugins v0.33.5",
    "scheduler-plugins@v0.34.7": "scheduler-plugins v0.34.7",
    "scheduler-plugins@main": "scheduler-plugins main (903da7df)",
}
ARGS = "profiles[0].pluginConfig"


def profile(scheduler_name: str, score: list[str], entries: list[dict[str, Any]]) -> dict[str, Any]:
    return config(
        profiles=[
            {
                "schedulerName": scheduler_name,
                "plugins": {"score": {"enabled": [{"name": name} for name in score]}},
                "pluginConfig": entries,
            }
        ]
    )


#: Domain errors koord-scheduler starts with (NodeResourcesFitPlus, ScarceResourceAvoidance, LimitAware)
#: and values its own plugins read differently than written (LoadAwareScheduling).
KOORD_BAD = profile(
    "koord-scheduler",
    ["NodeResourcesFitPlus", "ScarceResourceAvoidance", "LimitAware", "LoadAwareScheduling"],
    [
        {
            "name": "NodeResourcesFitPlus",
            "args": {
                "kind": "NodeResourcesFitPlusArgs",
                "resources": {"nvidia.com/gpu": {"type": "MostAlocated", "weight": 2}},
            },
        },
        {"name": "ScarceResourceAvoidance", "args": {"resources": ["nvidia.com/gpu/extra"]}},
        {"name": "LimitAware", "args": {"scoringResourceWeights": {"cpu": 1, "gpu": 1}}},
        {"name": "LoadAwareScheduling", "args": {"estimator": "vpa", "resourceWeights": {}}},
    ],
)
#: Path -> the words after the build's name, one per rule module.
KOORD_NAMED = {
    f'{ARGS}[0].args.resources["nvidia.com/gpu"].type': "starts with it, but NodeResourcesFitPlus scores",
    f"{ARGS}[1].args.resources[0]": "starts with it, but no node has such a resource",
    f"{ARGS}[2].args.scoringResourceWeights.gpu": "carrying LimitAware starts with it",
    f"{ARGS}[3].args.estimator": "starts and estimates with",
    f"{ARGS}[3].args.resourceWeights": "treats an empty value as unset",
}

#: A Trimaran provider the plugin's New refuses, a target its defaulting replaces, Peaks without an address.
SIGS_BAD = profile(
    "scheduler-plugins-scheduler",
    ["TargetLoadPacking", "Peaks"],
    [
        {
            "name": "TargetLoadPacking",
            "args": {"targetUtilization": -1, "metricProvider": {"type": "Graphite"}},
        },
        {"name": "Peaks", "args": {"NodePowerModel": {"node-1": {"k0": 1, "k1": 2.5, "k2": 0.1}}}},
    ],
)
SIGS_NAMED = {
    f"{ARGS}[0].args.targetUtilization": "does not refuse it",
    f"{ARGS}[0].args.metricProvider.type": "does not start",
    f"{ARGS}[1].args.WatcherAddress": "does not start",
}


def named(report: Report, builds: dict[str, str]) -> dict[str, str]:
    """Path -> message of each error or warning that names the project (notes speak of every build)."""
    project = next(iter(builds)).partition("@")[0]
    return {f.path: f.message for f in report.findings if project in f.message and f.severity != "info"}


@pytest.mark.parametrize(
    ("builds", "document", "expected"),
    [(KOORD_BUILDS, KOORD_BAD, KOORD_NAMED), (SIGS_BUILDS, SIGS_BAD, SIGS_NAMED)],
    ids=["koord-scheduler", "scheduler-plugins"],
)
def test_each_build_is_the_one_its_findings_name(
    builds: dict[str, str], document: dict[str, Any], expected: dict[str, str]
) -> None:
    for spec, label in builds.items():
        found = named(check(document, scheduler=spec), builds)
        assert sorted(found) == sorted(expected), (spec, found)
        for path, words in expected.items():
            assert f"{label} {words}" in found[path], (spec, found[path])
            others = [other for other in builds.values() if other != label]
            assert not any(other in found[path] for other in others), (spec, found[path])


@pytest.mark.parametrize(
    ("builds", "document", "path"),
    [
        (KOORD_BUILDS, KOORD_BAD, f'{ARGS}[0].args.resources["nvidia.com/gpu"].type'),
        (SIGS_BUILDS, SIGS_BAD, f"{ARGS}[0].args.metricProvider.type"),
    ],
    ids=["koord-scheduler", "scheduler-plugins"],
)
def test_the_cli_names_the_build_in_text_and_json(
    builds: dict[str, str], document: dict[str, Any], path: str, tmp_path, capsys
) -> None:
    file = tmp_path / "config.yaml"
    file.write_text(yaml.safe_dump(document))
    for spec, label in builds.items():
        assert validate_main(["--scheduler", spec, str(file)]) == 1
        text = capsys.readouterr().out
        line = next(line for line in text.splitlines() if f": error: {path}:" in line)
        assert label in line, (spec, line)
        assert validate_main(["--scheduler", spec, "-o", "json", str(file)]) == 1
        (report,) = json.loads(capsys.readouterr().out)["files"]
        (error,) = (e for e in report["errors"] if e["path"] == path)
        assert label in error["message"], (spec, error["message"])
        assert report["schedulers"][0]["build"] == spec


@pytest.mark.parametrize(
    ("document", "spec", "label"),
    [
        (KOORD_BAD, "koord-scheduler@v1.8.0", "koord-scheduler v1.8.0 starts with it"),
        (SIGS_BAD, "scheduler-plugins@v0.34.7", "scheduler-plugins v0.34.7 does not start"),
    ],
    ids=["koord-scheduler", "scheduler-plugins"],
)
def test_auto_names_the_newest_release_it_applies_and_json_gives_its_build(
    document: dict[str, Any], spec: str, label: str, tmp_path, capsys
) -> None:
    """Detection takes each project's newest release; the findings say which, and ``-o json`` gives that
    build as ``--scheduler`` names it, so a later run can pin it."""
    file = tmp_path / "config.yaml"
    file.write_text(yaml.safe_dump(document))
    assert validate_main(["-o", "json", str(file)]) == 1
    output = json.loads(capsys.readouterr().out)
    assert output["scheduler"] == "auto"
    (report,) = output["files"]
    assert [(r["scheduler"], r["build"], r["certain"]) for r in report["schedulers"]] == [
        (spec.partition("@")[0], spec, True)
    ]
    assert any(label in e["message"] for e in report["errors"]), report["errors"]


def test_kube_scheduler_s_build_is_its_name() -> None:
    """kube-scheduler has no @VERSION: its build is the Kubernetes release, given apart."""
    (reader,) = check(config(profiles=[{"schedulerName": "default-scheduler"}])).readers
    assert reader.to_dict()["build"] == "kube-scheduler" and reader.to_dict()["release"] is None
