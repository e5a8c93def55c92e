"""kube-scheduler's own test tables, translated into configuration files, get kube-scheduler's verdict.

Each file under tests/fixtures/schedcfg-upstream/<Kubernetes version>/ is one case, translated by hand
(facts, not code) from, at the release tag v<version>.0 of kubernetes/kubernetes (1.37: v1.37.0-beta.0,
the newest tag readable; its config types were read at kubernetes/kube-scheduler v0.37.0-beta.0):

* pkg/scheduler/apis/config/validation/validation_test.go (TestValidateKubeSchedulerConfigurationV1)
* pkg/scheduler/apis/config/validation/validation_pluginargs_test.go (TestValidate*Args, *ScoringStrategy)
* pkg/scheduler/apis/config/scheme/scheme_test.go (TestCodecsDecodePluginConfig)
* cmd/kube-scheduler/app/options/options_test.go (TestSchedulerOptions: loading config files)

plus the framework's start-up checks (pkg/scheduler/framework/runtime/framework.go) and the per-release
plugin tables (validation.go invalidPluginsByVersion, v1/default_plugins.go) that those tests leave out.
The 1.36 and 1.37 directories hold the 1.35 cases again, re-judged with each release's gate defaults
(a case whose verdict turns on a gate default says so in a note and names the gate), plus the cases of
what changed: extension points (config/v1/types.go), plugin registry and interfaces, NodeResourcesFitArgs
ratio checks (kubernetes PR #132120). The same file appears under each release where its verdict differs.

The Go tests mostly validate the *internal* configuration, after decoding and defaulting; a file goes
through v1 defaulting first, so a few cases get a different verdict as a file (weight 0 -> 1, an empty
leader-election resourceName -> kube-scheduler, ...). Those files say so in a ``# note:`` line and expect
the verdict kube-scheduler gives the file. Header lines of each file:

``# verdict: valid|invalid`` (exit 0 / 1), ``# errors: a | b`` (exactly the error paths),
``# warnings: a | b`` (at least these warning paths), ``# feature-gates: A=true`` (passed through).

The cases run through the real CLI: in-process ``limitguard validate`` per file for the exit code and the
paths, and once per version as the installed ``limitguard`` executable on all files (JSON output).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from limitguard.cli import validate as cli
from tests.support import FIXTURES

ROOT = FIXTURES / "schedcfg-upstream"
VERSIONS = sorted(p.name for p in ROOT.iterdir() if p.is_dir())


@dataclass(frozen=True)
class Case:
    path: Path
    version: str
    verdict: str
    errors: frozenset[str]
    warnings: frozenset[str]
    gates: str

    @property
    def id(self) -> str:
        return str(self.path.relative_to(ROOT))


def _header(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        fields[key] = value
    return fields


def _paths(text: str | None) -> frozenset[str]:
    return frozenset(p.strip() for p in text.split(" | ")) if text is not None else frozenset()


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(ROOT.rglob("*.yaml")):
        header = _header(path)
        cases.append(
            Case(
                path,
                path.relative_to(ROOT).parts[0],
                header["verdict"],
                _paths(header.get("errors")),
                _paths(header.get("warnings")),
                header.get("feature-gates", ""),
            )
        )
    return cases


CASES = load_cases()


def _argv(case: Case, *extra: str) -> list[str]:
    argv = ["--kubernetes-version", case.version, "-o", "json", *extra]
    if case.gates:
        argv += ["--feature-gates", case.gates]
    return argv


def test_cases_cover_every_source_and_both_versions() -> None:
    assert VERSIONS == ["1.31", "1.35", "1.36", "1.37"]
    for version in VERSIONS:
        groups = {c.path.parent.name for c in CASES if c.version == version}
        assert groups == {"validation", "pluginargs", "scheme", "options", "framework"}
    assert all(c.verdict in ("valid", "invalid") for c in CASES)
    assert all(bool(c.errors) == (c.verdict == "invalid") for c in CASES)
    tags = {"1.37": "v1.37.0-beta.0"}
    assert all(
        _header(c.path)["source"].endswith(f"(Kubernetes {tags.get(c.version, f'v{c.version}.0')})")
        for c in CASES
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_gets_kube_schedulers_verdict(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([*_argv(case), str(case.path)])
    report = json.loads(capsys.readouterr().out)["files"][0]
    errors = {f["path"] for f in report["errors"]}
    warnings = {f["path"] for f in report["warnings"]}
    assert code == (0 if case.verdict == "valid" else 1), report
    assert errors == case.errors, report["errors"]
    assert case.warnings <= warnings, report["warnings"]


def test_text_output_names_the_field_path(capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in CASES if c.id == "1.35/validation/bad-parallelism-invalid-value.yaml")
    assert cli.main(["--kubernetes-version", "1.35", str(case.path)]) == 1
    out = capsys.readouterr().out
    assert "error: parallelism: Invalid value: 0" in out and out.strip().endswith(
        "invalid (1 error, 3 warnings)"
    )  # CustomSort x2, CustomBind


def _executable() -> list[str]:
    found = shutil.which("limitguard", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "limitguard", "validate"]


@pytest.mark.parametrize("version", VERSIONS)
def test_installed_command_agrees_on_every_file(version: str) -> None:
    """One process per (version, feature gates): the shipped entry point, not just the functions."""
    groups: dict[str, list[Case]] = {}
    for case in CASES:
        if case.version == version:
            groups.setdefault(case.gates, []).append(case)
    for gates, cases in groups.items():
        argv = [*_executable(), "validate", "--kubernetes-version", version, "-o", "json"]
        if argv[1:4] == ["-m", "limitguard", "validate"]:
            argv.remove("validate")
        if gates:
            argv += ["--feature-gates", gates]
        result = subprocess.run(
            [*argv, *(str(c.path) for c in cases)], capture_output=True, text=True, check=False, timeout=600
        )
        document = json.loads(result.stdout)
        assert document["kubernetesVersion"] == version
        verdicts = {Path(f["file"]).name: f["valid"] for f in document["files"]}
        assert verdicts == {c.path.name: c.verdict == "valid" for c in cases}
        assert result.returncode == (0 if all(c.verdict == "valid" for c in cases) else 1)
