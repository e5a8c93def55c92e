"""Naming one build of a scheduler (NAME@VERSION) in the CLI, the ConfigMap annotation and the server's
setting: a CLI refuses a build limitguard has no table for (exit 2); the webhook never blocks a write for
it, it applies the newest release and warns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from limitguard.admission.configmaps import configmap_check, configmap_release
from limitguard.cli.configfile import parse_config
from limitguard.cli.validate import main as validate_main
from limitguard.core.config import ConfigError
from limitguard.schedcfg import configmap_verdict
from limitguard.schedcfg.schedulers import CHOICE_PATTERN
from tests.support import REPO
from tests.unit.schedcfg.helpers import config
from tests.unit.schedcfg.sigs_helpers import NODE_METADATA_ARGS

#: Enables NodeMetadata at score and gives it args: only scheduler-plugins' development branch has it.
NODE_METADATA = config(
    profiles=[
        {
            "schedulerName": "s",
            "plugins": {"score": {"enabled": [{"name": "NodeMetadata"}]}},
            "pluginConfig": [{"name": "NodeMetadata", "args": NODE_METADATA_ARGS}],
        }
    ]
)


def run_cli(tmp_path: Path, capsys: Any, *flags: str) -> tuple[int, str]:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(NODE_METADATA))
    code = validate_main([*flags, str(path)])
    return code, capsys.readouterr().out


def test_the_cli_takes_a_build(tmp_path: Path, capsys: Any) -> None:
    code, out = run_cli(tmp_path, capsys, "--scheduler", "scheduler-plugins@main", "--strict", "-o", "json")
    result = json.loads(out)
    assert code == 0 and result["valid"] and result["scheduler"] == "scheduler-plugins@main"
    (reader,) = result["files"][0]["schedulers"]
    assert (reader["release"], reader["kubernetesVersion"]) == ("main (903da7df)", "1.35")
    code, out = run_cli(tmp_path, capsys, "--scheduler", "scheduler-plugins")
    assert code == 1 and "choose it with --scheduler scheduler-plugins@main" in out


def test_auto_says_it_took_the_newest_release(tmp_path: Path, capsys: Any) -> None:
    code, out = run_cli(tmp_path, capsys)
    assert code == 1
    assert "judged for scheduler-plugins v0.34.7 (Kubernetes 1.34)" in out
    assert "its newest release v0.34.7 applies" in out


@pytest.mark.parametrize("value", ["scheduler-plugins@v0.36.0", "kube-scheduler@1.38", "koord-scheduler@"])
def test_the_cli_refuses_a_build_it_has_no_table_for(tmp_path: Path, capsys: Any, value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tmp_path, capsys, "--scheduler", value)
    assert exit_info.value.code == 2
    assert "--scheduler" in capsys.readouterr().err


def configmap(annotation: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "cm", "namespace": "ns"}
    if annotation is not None:
        metadata["annotations"] = {"limitguard.io/scheduler": annotation}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {"c": json.dumps(NODE_METADATA)},
    }


def test_the_annotation_takes_a_build() -> None:
    main = configmap_check(configmap("scheduler-plugins@main"))
    assert main is not None and main.allowed and main.warnings == ()
    released = configmap_check(configmap("scheduler-plugins@v0.34.7"))
    assert released is not None and not released.allowed
    assert "--scheduler scheduler-plugins@main" in released.message


def test_an_unknown_version_in_the_annotation_warns_and_applies_the_newest_release() -> None:
    report = configmap_verdict(configmap("scheduler-plugins@v0.36.0"))
    assert report is not None
    (note,) = [f for f in report.warnings if f.rule == "input.scheduler-version"]
    assert note.path == "metadata.annotations[limitguard.io/scheduler]"
    assert note.message.startswith("scheduler-plugins@v0.36.0: unknown build, v0.34.7 applies (known: ")
    assert {r.build_name for r in report.readers} == {"v0.34.7"}
    # a ConfigMap that v0.34.7 accepts is admitted, with the warning
    accepted = configmap(annotation="koord-scheduler@v9.9.9")
    accepted["data"] = {"c": json.dumps(config(profiles=[{"schedulerName": "s"}]))}
    response = configmap_check(accepted)
    assert response is not None and response.allowed
    assert any("koord-scheduler@v9.9.9: unknown build, v1.8.0 applies" in w for w in response.warnings)


def test_the_server_setting_takes_a_build_and_warns_on_every_verdict_for_an_unknown_one() -> None:
    release, why = configmap_release(None, {}, "v1.37.0", "koord-scheduler@v1.7.0")
    assert release.minor == 31 and why == "koord-scheduler v1.7.0 is Kubernetes 1.28"
    release, why = configmap_release(None, {}, "v1.37.0", "koord-scheduler@v1.9.0")
    assert release.minor == 35 and release.note is not None
    assert why.startswith("koord-scheduler v1.8.0 is Kubernetes 1.35; koord-scheduler@v1.9.0: unknown build")
    assert (
        "schedulerConfigValidation.scheduler koord-scheduler@v1.9.0: unknown build, v1.8.0 applies"
        in release.note
    )
    document = configmap(None)
    document["data"] = {"c": json.dumps(config(profiles=[{"schedulerName": "s"}]))}
    response = configmap_check(document, release, "koord-scheduler@v1.9.0")
    assert response is not None and response.allowed
    assert any("schedulerConfigValidation.scheduler" in w for w in response.warnings)


def test_the_configuration_file_accepts_name_at_version() -> None:
    head = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    for value in ("scheduler-plugins@main", "koord-scheduler@v1.7.0", "koord-scheduler@v1.9.0"):
        parsed = parse_config({**head, "schedulerConfigValidation": {"scheduler": value}})
        assert parsed.scheduler_name == value
    for value in ("volcano@v1", "auto@main", "koord-scheduler@"):
        with pytest.raises(ConfigError, match=r"schedulerConfigValidation\.scheduler"):
            parse_config({**head, "schedulerConfigValidation": {"scheduler": value}})


def test_the_schemas_pattern_is_the_validators() -> None:
    server = json.loads((REPO / "webhook/limitguard/schemas/limitguard-config.schema.json").read_text())
    chart = json.loads((REPO / "charts/limitguard/values.schema.json").read_text())
    assert (
        server["properties"]["schedulerConfigValidation"]["properties"]["scheduler"]["pattern"]
        == CHOICE_PATTERN
    )
    chart_pattern = chart["properties"]["config"]["properties"]["schedulerConfigValidation"]["properties"][
        "scheduler"
    ]["pattern"]
    assert chart_pattern == CHOICE_PATTERN.replace("^(", "^(|", 1)


def test_a_huge_annotation_version_is_clipped_and_still_admits() -> None:
    document = configmap("koord-scheduler@v" + "9" * 200_000)
    document["data"] = {"c": json.dumps(config(profiles=[{"schedulerName": "s"}]))}
    report = configmap_verdict(document)
    assert report is not None and report.ok
    (note,) = report.warnings
    assert len(note.message) < 200 and "unknown build, v1.8.0 applies" in note.message
    listed = configmap(None)
    listed["metadata"]["annotations"] = {"limitguard.io/scheduler": ["koord-scheduler@v1.8.0"]}
    refused = configmap_verdict(listed)
    assert refused is not None and [f.rule for f in refused.errors] == ["input.scheduler"]
