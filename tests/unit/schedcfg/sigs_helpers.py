"""Running one scheduler-plugins args kind as the validator does: schema, then defaulting, then its rules."""

from __future__ import annotations

from typing import Any

from limitguard.schedcfg.args.kind import ArgsKind
from limitguard.schedcfg.args.sigs import KINDS, KUBERNETES_MINOR, UNRELEASED_KINDS
from limitguard.schedcfg.report import Finding
from limitguard.schedcfg.rules.releases import Release

from tests.unit.schedcfg.helpers import run_kind

BY_KIND: dict[str, ArgsKind] = {entry.kind: entry for entry in KINDS}
BY_PLUGIN: dict[str, ArgsKind] = {entry.plugin: entry for entry in KINDS}
#: The kinds as the project's master branch has them (no release yet).
UNRELEASED: dict[str, ArgsKind] = {entry.kind: entry for entry in UNRELEASED_KINDS}
RELEASE = Release(KUBERNETES_MINOR)
ARGS = "args"


def run(
    kind: str, args: dict[str, Any], kinds: dict[str, ArgsKind] = BY_KIND
) -> tuple[list[Finding], dict[str, Any]]:
    """All findings for ``args`` of ``kind`` (paths below ``args``) and the defaulted args."""
    return run_kind(kinds[kind], args, RELEASE)


def errors(kind: str, args: dict[str, Any], kinds: dict[str, ArgsKind] = BY_KIND) -> list[str]:
    return [str(f) for f in run(kind, args, kinds)[0] if f.severity == "error"]


def warnings(kind: str, args: dict[str, Any]) -> list[str]:
    return [str(f) for f in run(kind, args)[0] if f.severity == "warning"]


def defaulted(kind: str, args: dict[str, Any], kinds: dict[str, ArgsKind] = BY_KIND) -> dict[str, Any]:
    findings, out = run(kind, args, kinds)
    assert [f for f in findings if f.severity == "error"] == [], findings
    return out
