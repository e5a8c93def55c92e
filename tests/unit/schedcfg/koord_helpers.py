"""Running one Koordinator args kind as the validator does: schema, then defaulting, then its rules."""

from __future__ import annotations

from typing import Any

from limitguard.schedcfg.args.kind import ArgsKind
from limitguard.schedcfg.args.koordinator import KINDS, KUBERNETES_MINOR
from limitguard.schedcfg.report import Finding
from limitguard.schedcfg.rules.releases import Release

from tests.unit.schedcfg.helpers import run_kind

BY_KIND: dict[str, ArgsKind] = {entry.kind: entry for entry in KINDS}
BY_PLUGIN: dict[str, ArgsKind] = {entry.plugin: entry for entry in KINDS}
RELEASE = Release(KUBERNETES_MINOR)
ARGS = "args"


def run(kind: str, args: dict[str, Any]) -> tuple[list[Finding], dict[str, Any]]:
    """All findings for ``args`` of ``kind`` (paths below ``args``) and the defaulted args."""
    return run_kind(BY_KIND[kind], args, RELEASE)


def of(kind: str, args: dict[str, Any], severity: str) -> list[str]:
    return [str(f) for f in run(kind, args)[0] if f.severity == severity]


def errors(kind: str, args: dict[str, Any]) -> list[str]:
    return of(kind, args, "error")


def warnings(kind: str, args: dict[str, Any]) -> list[str]:
    return of(kind, args, "warning")


def defaulted(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    findings, out = run(kind, args)
    assert [f for f in findings if f.severity == "error"] == [], findings
    return out
