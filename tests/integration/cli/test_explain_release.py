"""`explain` and `audit` count under the release's pod rules: --kubernetes-version, else the
configuration's kubernetesVersion, else (file mode) the newest supported; and explain names a pod's
pod group. The cluster is tests/integration/cli/cluster.yaml with the ratios of config.yaml."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml

from limitguard.cli import audit as audit_command
from limitguard.cli import explain as explain_command
from tests.support import resizing_pod
from tests.support import run_command as run

HERE = Path(__file__).resolve().parent
CLUSTER, CONFIG = HERE / "cluster.yaml", HERE / "config.yaml"

RESIZING = resizing_pod(schedulingGroup={"podGroupName": "trainer-0"})


def explain(tmp_path: Path, capsys, *extra: str, config: Path = CONFIG) -> dict:
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(RESIZING))
    argv = [str(pod), "--cluster", str(CLUSTER), "--config", str(config), "-o", "json", *extra]
    code, out, err = run(explain_command, argv, capsys)
    assert code == 0, err
    return json.loads(out)


def test_explain_counts_by_the_release_given(tmp_path, capsys):
    report = explain(tmp_path, capsys, "--kubernetes-version", "1.36")
    assert report["limits"]["cpu"] == "8"
    assert report["notes"][-1].endswith("pod rules of Kubernetes 1.36: --kubernetes-version 1.36")
    report = explain(tmp_path, capsys, "--kubernetes-version", "v1.37.2")
    assert report["limits"]["cpu"] == "5"


def test_explain_reads_the_configuration_key_and_defaults_to_the_newest(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.read_text() + 'kubernetesVersion: "1.35"\n')
    report = explain(tmp_path, capsys, config=config)
    assert report["limits"]["cpu"] == "8"
    assert report["notes"][-1].endswith(
        f"pod rules of Kubernetes 1.35: kubernetesVersion '1.35' configured in {config}"
    )
    report = explain(tmp_path, capsys)
    assert report["limits"]["cpu"] == "5"
    assert "pod rules of Kubernetes 1.37: the newest supported release" in report["notes"][-1]


def test_explain_says_the_pod_belongs_to_a_group(tmp_path, capsys):
    notes = explain(tmp_path, capsys)["notes"]
    assert any(note.startswith("the pod belongs to pod group trainer-0") for note in notes)


@pytest.mark.parametrize("version", ["1.38", "1.30", "latest"])
def test_an_unsupported_release_is_refused(tmp_path, capsys, version):
    parser = argparse.ArgumentParser()
    explain_command.add_arguments(parser)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["pod.yaml", "--kubernetes-version", version])
    assert exited.value.code == 2
    assert "--kubernetes-version" in capsys.readouterr().err


def test_audit_names_the_release_in_json(capsys):
    code, out, _ = run(
        audit_command,
        ["--cluster", str(CLUSTER), "--config", str(CONFIG), "-o", "json", "--kubernetes-version", "1.33"],
        capsys,
    )
    assert code == 1
    assert json.loads(out)["podRules"] == (
        "pod limits counted under the pod rules of Kubernetes 1.33: --kubernetes-version 1.33"
    )


@pytest.mark.parametrize(("configured", "applied"), [("1.20", 31), ("v1.40.1", 37)])
def test_a_configured_release_outside_the_range_is_judged_as_the_nearest_with_a_warning(
    tmp_path, capsys, configured, applied
):
    """As `serve` logs it, explain and audit print the warning to stderr and carry it in their JSON."""
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.read_text() + f'kubernetesVersion: "{configured}"\n')
    warning = f"Kubernetes version '{configured}' is outside the supported 1.31-1.37: applying the rules of 1.{applied}"
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(RESIZING))
    for command, argv in (
        (explain_command, [str(pod), "--cluster", str(CLUSTER), "--config", str(config)]),
        (audit_command, ["--cluster", str(CLUSTER), "--config", str(config)]),
    ):
        name = command.__name__.rsplit(".", 1)[-1]
        _, _, err = run(command, argv, capsys)
        assert err == f"limitguard {name}: warning: {warning}\n"
        _, out, err = run(command, [*argv, "-o", "json"], capsys)
        assert err == f"limitguard {name}: warning: {warning}\n"
        assert json.loads(out)["warnings"] == [warning]
        counted = json.loads(out).get("podRules") or json.loads(out)["notes"][-1]
        assert (
            f"pod rules of Kubernetes 1.{applied}: kubernetesVersion '{configured}' configured in" in counted
        )
    _, out, err = run(
        audit_command, ["--cluster", str(CLUSTER), "--config", str(CONFIG), "-o", "json"], capsys
    )
    assert (err, json.loads(out)["warnings"]) == ("", [])
