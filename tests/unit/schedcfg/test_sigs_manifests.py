"""The scheduler-plugins project's own v1 configurations (tests/fixtures/scheduler-plugins, tag v0.34.7, see
PROVENANCE.md there): every args entry they give passes its kind with zero findings, and every plugin they
enable is one the scheduler registers, at a point it implements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from limitguard.schedcfg.args.sigs import V0_34_7
from tests.support import FIXTURES
from tests.unit.schedcfg.sigs_helpers import BY_PLUGIN, run

PLUGINS = V0_34_7.plugins

FOLDER = FIXTURES / "scheduler-plugins"
FILES = sorted(p for p in FOLDER.glob("*.yaml"))
#: How many pluginConfig entries each file gives (all of them are checked).
ARGS_ENTRIES = {
    "appgroup-scheduler-config.yaml": 2,
    "as-a-second-scheduler-configmap.rendered.yaml": 1,
    "capacityscheduling-scheduler-config.yaml": 0,
    "coscheduling-scheduler-config.yaml": 1,
    "networktopology-scheduler-config.yaml": 2,
    "noderesources-scheduler-config.yaml": 1,
    "noderesourcetopology-scheduler-configmap.yaml": 1,
    "peaks-deployment-scheduler-config.yaml": 1,
    "podstate-scheduler-config.yaml": 0,
}
#: In-tree plugins the manifests name (kube-scheduler 1.34's default_plugins.go).
IN_TREE = {"NodeResourcesFit", "PrioritySort"}


def configurations(path: Path) -> list[dict[str, Any]]:
    """The KubeSchedulerConfigurations in a file, also inside a ConfigMap's data values."""
    found = []
    for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if document.get("kind") == "ConfigMap":
            found += [yaml.safe_load(text) for text in document["data"].values()]
        else:
            found.append(document)
    assert found and all(c["kind"] == "KubeSchedulerConfiguration" for c in found)
    return found


def test_every_v1_manifest_is_here() -> None:
    """PROVENANCE.md lists what was copied; the folder holds exactly those files."""
    listed = {
        line.split("`")[1]
        for line in (FOLDER / "PROVENANCE.md").read_text().splitlines()
        if line.startswith("| `")
    }
    assert listed == {p.name for p in FILES} == set(ARGS_ENTRIES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_manifest_args_pass_their_kind_with_no_findings(path: Path) -> None:
    checked = 0
    for config in configurations(path):
        assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
        for profile in config["profiles"]:
            for entry in profile.get("pluginConfig") or []:
                kind = BY_PLUGIN[entry["name"]].kind
                findings, _ = run(kind, entry.get("args") or {})
                assert findings == [], (entry["name"], [str(f) for f in findings])
                checked += 1
    assert checked == ARGS_ENTRIES[path.name]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_manifest_plugins_are_registered_at_points_they_implement(path: Path) -> None:
    for config in configurations(path):
        for profile in config["profiles"]:
            for point, sets in (profile.get("plugins") or {}).items():
                for plugin in sets.get("enabled") or []:
                    name = plugin["name"]
                    if name in IN_TREE:
                        continue
                    assert name in PLUGINS, name
                    if point != "multiPoint":
                        assert point in PLUGINS[name], (name, point)


def test_the_peaks_example_uses_the_go_field_names() -> None:
    """pkg/trimaran/peaks/deployment/scheduler-config.yaml writes WatcherAddress and NodePowerModel: the
    only spelling the scheduler decodes (v1 PeaksArgs has malformed json tags)."""
    (config,) = configurations(FOLDER / "peaks-deployment-scheduler-config.yaml")
    args = config["profiles"][0]["pluginConfig"][0]["args"]
    assert set(args) == {"WatcherAddress", "NodePowerModel"}
    renamed = {"watcherAddress": args["WatcherAddress"], "NodePowerModel": args["NodePowerModel"]}
    assert [f.path for f in run("PeaksArgs", renamed)[0] if f.severity == "error"] == [
        "args.watcherAddress",
        "args.WatcherAddress",
    ]
