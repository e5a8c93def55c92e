"""limitguard validate: exit codes, output formats, stdin."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from limitguard.cli import validate as cli
from tests.support import HANG_GUARD_SECONDS, REPO
from tests.unit.schedcfg.helpers import FIXTURES

VALID = str(FIXTURES / "schedcfg-v1-coscheduling.scheduler-plugins.yaml")
# NodeResourcesFit weight 0: kube-scheduler defaults it to 1 and starts - a warning, not an error (issue 15).
WARNS_TEXT = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 0}
"""
INVALID = str(FIXTURES / "schedcfg-v1-reservationargs-preallocation.koordinator-website.yaml")
BAD_YAML = str(
    FIXTURES / "schedcfg-v1-configmap-nodefit-mostallocated-malformed-indent.koordinator-website.yaml"
)


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(list(argv)))


def test_valid_file_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(VALID) == 0
    assert capsys.readouterr().out.strip().endswith("valid (0 errors, 0 warnings)")


@pytest.fixture
def warns(tmp_path: Path) -> str:
    path = tmp_path / "warns.yaml"
    path.write_text(WARNS_TEXT)
    return str(path)


def test_warnings_still_exit_0_unless_strict(warns: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(warns) == 0
    out = capsys.readouterr().out
    assert "weight 0 is replaced by the default 1" in out and out.strip().endswith(
        "valid (0 errors, 1 warning)"
    )
    assert run("--strict", warns) == 1
    out = capsys.readouterr().out
    assert ": valid" not in out
    assert out.strip().endswith("invalid (--strict: warnings count as errors) (0 errors, 1 warning)")


def test_strict_json_agrees_with_the_exit_code(warns: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--strict", "-o", "json", warns) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is False and document["files"][0]["valid"] is False
    assert document["summary"]["invalid"] == 1
    assert run("-o", "json", warns) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is True and document["files"][0]["valid"] is True


def test_invalid_file_exits_1_and_prints_location(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(VALID, INVALID) == 1
    out = capsys.readouterr().out
    assert f"{INVALID}:6:7: error: profiles[0].plugins.reservation: Forbidden: unknown field" in out


def test_yaml_error_exits_1_with_line_and_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(BAD_YAML) == 1
    assert (
        f"{BAD_YAML}:12:6: error: data[scheduler-config.yaml]: YAML syntax error" in capsys.readouterr().out
    )


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(VALID, str(tmp_path / "missing.yaml")) == 2
    assert "cannot read" in capsys.readouterr().err


def test_usage_error_exits_2() -> None:
    with pytest.raises(SystemExit) as excinfo:
        cli.main([])
    assert excinfo.value.code == 2


def test_non_utf8_file_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"kind: \xe9\n")
    assert run(str(path)) == 1


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--output", "json", VALID, INVALID) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is False
    assert document["summary"] == {"files": 2, "invalid": 1, "errors": 1, "warnings": 0}
    (error,) = document["files"][1]["errors"]
    assert error["path"] == "profiles[0].plugins.reservation"
    assert error["rule"] == "schema.unknown-field"
    assert (error["line"], error["column"]) == (6, 7)
    assert error["text"].startswith("profiles[0].plugins.reservation: Forbidden")


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 0\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert run("-") == 1
    assert "<stdin>:3:1: error: parallelism: Invalid value: 0" in capsys.readouterr().out


def test_verbose_shows_notes(capsys: pytest.CaptureFixture[str]) -> None:
    run(VALID)
    assert "note:" not in capsys.readouterr().out
    run("-v", VALID)
    assert 'note: profiles[0].pluginConfig[0].args: plugin "Coscheduling"' in capsys.readouterr().out


def test_module_entry_point(tmp_path: Path) -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "limitguard.cli.validate", VALID],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_unrendered_helm_template_gets_a_helm_hint_first(capsys: pytest.CaptureFixture[str]) -> None:
    template = str(FIXTURES / "schedcfg-v1-configmap-koord-scheduler-helm-v1.8.0.koordinator-charts.yaml.tpl")
    assert run(template) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if ": error: " in x)
    assert line.split(": error: ", 1)[1].startswith(
        "the input looks like an unrendered Helm template ({{ ... }}): run `helm template` first"
    )


def test_unsupported_kubernetes_version_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--kubernetes-version", "1.30", VALID) == 2
    assert "supported: 1.31-1.37" in capsys.readouterr().err
    assert run("--kubernetes-version", "1.38", VALID) == 2
    assert "Kubernetes version '1.38' is not supported" in capsys.readouterr().err


def test_the_version_changes_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ebs.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins: {filter: {enabled: [{name: EBSLimits}]}}\n"
    )
    assert run("--kubernetes-version", "1.31", str(path)) == 0
    assert run(str(path)) == 1
    assert "profiles[0].plugins.filter.enabled[0]" in capsys.readouterr().out
