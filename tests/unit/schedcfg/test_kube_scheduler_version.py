"""``kube-scheduler@VERSION`` names the Kubernetes release kube-scheduler is, wherever it is named: the
CLI's --scheduler, the server's schedulerConfigValidation.scheduler (the configuration file and the
chart accept it) and the ConfigMap annotation all judge a file as that release's kube-scheduler does.
Before, the CLI refused it while the server took it and validated ConfigMaps for 1.37 ("default")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from limitguard.admission.configmaps import configmap_check, configmap_release
from limitguard.cli.configfile import parse_config
from limitguard.cli.validate import main as validate_main
from limitguard.core.config import ConfigError
from limitguard.schedcfg.schedulers import resolve
from limitguard.schedcfg.validator import SCHEDULER_ANNOTATION
from tests.unit.schedcfg.helpers import config

#: NodeDeclaredFeatures is registered from Kubernetes 1.35: kube-scheduler 1.33 refuses to start with it.
DECLARED = config(
    profiles=[{"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}]
)
HEAD = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}


def configmap(annotation: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "sched", "namespace": "kube-system"}
    if annotation:
        metadata["annotations"] = {SCHEDULER_ANNOTATION: annotation}
    return {"metadata": metadata, "data": {"config.yaml": json.dumps(DECLARED)}}


def cli(tmp_path: Path, capsys: Any, *flags: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(DECLARED))
    code = validate_main([*flags, "-o", "json", str(path)])
    return code, json.loads(capsys.readouterr().out)


def test_the_version_is_the_kubernetes_release() -> None:
    scheduler = resolve("kube-scheduler@v1.33.0")
    assert scheduler is not None and scheduler.build is None
    assert (scheduler.kubernetes_minor, scheduler.spec) == (33, "kube-scheduler@v1.33.0")


def test_the_cli_validates_for_the_release_it_names(tmp_path: Path, capsys: Any) -> None:
    code, result = cli(tmp_path, capsys, "--scheduler", "kube-scheduler@v1.33.0")
    assert code == 1 and result["kubernetesVersion"] == "1.33"
    assert result["kubernetesVersionFrom"] == "kube-scheduler v1.33.0 is Kubernetes 1.33"
    (reader,) = result["files"][0]["schedulers"]
    assert (reader["build"], reader["kubernetesVersion"]) == ("kube-scheduler@v1.33.0", "1.33")
    code, result = cli(tmp_path, capsys, "--scheduler", "kube-scheduler@v1.35.2")
    assert code == 0 and result["kubernetesVersion"] == "1.35"


def test_the_cli_refuses_two_releases(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(DECLARED))
    flags = ["--scheduler", "kube-scheduler@v1.33.0", "--kubernetes-version", "1.36", str(path)]
    assert validate_main(flags) == 2
    assert "give one of them" in capsys.readouterr().err
    assert (
        validate_main(["--scheduler", "kube-scheduler@v1.33.0", "--kubernetes-version", "v1.33.4", str(path)])
        == 1
    )


def test_the_server_setting_validates_configmaps_as_the_cli_does(tmp_path: Path, capsys: Any) -> None:
    """The same ConfigMap, the same setting: the same release and the same verdict as the CLI."""
    release, why = configmap_release(None, {}, "v1.37.1", "kube-scheduler@v1.33.0", cluster_asked=True)
    assert (release.minor, why) == (33, "kube-scheduler v1.33.0 is Kubernetes 1.33")
    denied = configmap_check(configmap(), release, "kube-scheduler@v1.33.0")
    assert denied is not None and not denied.allowed
    assert "NodeDeclaredFeatures" in (denied.message or "")
    code, result = cli(tmp_path, capsys, "--scheduler", "kube-scheduler@v1.33.0")
    assert code == 1 and result["kubernetesVersion"] == release.name
    release, _ = configmap_release(None, {}, "v1.37.1", "kube-scheduler@v1.35.2", cluster_asked=True)
    allowed = configmap_check(configmap(), release, "kube-scheduler@v1.35.2")
    assert allowed is not None and allowed.allowed


def test_the_annotation_names_the_release_too() -> None:
    newest, _ = configmap_release(None, {})
    denied = configmap_check(configmap("kube-scheduler@v1.33.0"), newest)
    assert denied is not None and not denied.allowed
    allowed = configmap_check(configmap(), newest)
    assert allowed is not None and allowed.allowed


def test_the_configuration_file_refuses_what_the_cli_refuses() -> None:
    parsed = parse_config({**HEAD, "schedulerConfigValidation": {"scheduler": "kube-scheduler@v1.33.0"}})
    assert parsed.scheduler_name == "kube-scheduler@v1.33.0"
    with pytest.raises(ConfigError, match=r"schedulerConfigValidation\.scheduler: .*not supported"):
        parse_config({**HEAD, "schedulerConfigValidation": {"scheduler": "kube-scheduler@v1.29.0"}})
    both = {"scheduler": "kube-scheduler@v1.33.0", "kubernetesVersion": "1.36"}
    with pytest.raises(ConfigError, match="give one of them"):
        parse_config({**HEAD, "schedulerConfigValidation": both})
