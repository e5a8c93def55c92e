"""Koordinator's own v1.8.0 configurations (tests/fixtures/koordinator, see PROVENANCE.md there): every
Koordinator args entry passes its kind with zero findings, and every plugin they enable is registered by
koord-scheduler v1.8.0 at a point it implements (or is one of kube-scheduler 1.35's in-tree plugins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from limitguard.schedcfg.args.koordinator import V1_8_0
from tests.support import FIXTURES
from tests.unit.schedcfg.koord_helpers import BY_KIND, BY_PLUGIN, run

PLUGINS = V1_8_0.plugins

FOLDER = FIXTURES / "koordinator"
FILES = sorted(FOLDER.glob("*.yaml"))
#: The Koordinator args entries each file gives (all of them are checked).
KOORD_ARGS = {
    "charts-koord-scheduler-config-minimal.rendered.yaml": [
        "LoadAwareSchedulingArgs",
        "ElasticQuotaArgs",
        "CoschedulingArgs",
    ],
    "charts-koord-scheduler-config.rendered.yaml": [
        "LoadAwareSchedulingArgs",
        "ElasticQuotaArgs",
        "CoschedulingArgs",
        "DeviceShareArgs",
    ],
    "config-manager-scheduler-config.yaml": ["LoadAwareSchedulingArgs", "ElasticQuotaArgs"],
}
#: In-tree plugins the files name (kube-scheduler 1.35's default_plugins.go) with the points they use.
IN_TREE = {"NodeResourcesFit", "PrioritySort", "DefaultPreemption", "DefaultBinder"}


def configurations(path: Path) -> list[dict[str, Any]]:
    """The KubeSchedulerConfigurations inside the ConfigMaps of a file."""
    found = []
    for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if document and document.get("kind") == "ConfigMap":
            found += [yaml.safe_load(text) for text in document["data"].values()]
    return found


def test_every_file_is_listed_here_and_in_provenance() -> None:
    assert [p.name for p in FILES] == sorted(KOORD_ARGS)
    rows = [line for line in (FOLDER / "PROVENANCE.md").read_text().splitlines() if line.startswith("| `")]
    assert sorted(row.split("`")[1] for row in rows) == sorted(KOORD_ARGS)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_koordinator_args_pass_with_zero_findings(path: Path) -> None:
    kinds = []
    for config in configurations(path):
        assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
        for profile in config["profiles"]:
            for entry in profile.get("pluginConfig", []):
                if entry["name"] not in BY_PLUGIN:
                    assert entry["name"] in IN_TREE
                    continue
                kind = entry["args"]["kind"]
                assert BY_KIND[kind].plugin == entry["name"]
                findings, _ = run(kind, entry["args"])
                assert findings == [], (path.name, kind)
                kinds.append(kind)
    assert kinds == KOORD_ARGS[path.name]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_enabled_plugins_are_registered_at_points_they_implement(path: Path) -> None:
    seen = set()
    for config in configurations(path):
        for profile in config["profiles"]:
            for point, plugin_set in profile["plugins"].items():
                for plugin in plugin_set.get("enabled") or []:
                    name = plugin["name"]
                    seen.add(name)
                    assert name in IN_TREE or point in PLUGINS[name], (path.name, point, name)
    assert seen - IN_TREE <= set(PLUGINS)
    assert "Coscheduling" in seen  # the gang plugin, enabled everywhere but never at queueSort


def test_plugins_and_kinds_agree() -> None:
    """Each args kind configures a registered plugin; register.go's nine kinds (and LimitAware's, judged as
    Koordinator PR #1486 has it) cover the plugins with args (DefaultPreBind has none)."""
    assert {entry.plugin for entry in BY_KIND.values()} <= set(PLUGINS)
    plugins_with_kinds = {entry.plugin for entry in V1_8_0.kinds}
    assert plugins_with_kinds == set(PLUGINS) - {"DefaultPreBind"}
    assert len({entry.kind for entry in V1_8_0.kinds} - {"LimitAwareArgs", "ResourceTypesArgs"}) == 9
    assert "queueSort" not in PLUGINS["Coscheduling"]
