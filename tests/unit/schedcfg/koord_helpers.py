"""Running one Koordinator args kind as the validator does: schema, then defaulting, then its rules, as one
koord-scheduler build reads them (default: the newest release)."""

from __future__ import annotations

from typing import Any

from limitguard.schedcfg.args.kind import ArgsKind
from limitguard.schedcfg.args.koordinator import KINDS, NEWEST_BUILD
from limitguard.schedcfg.report import Finding
from limitguard.schedcfg.schedulers import BUILDS
from limitguard.schedcfg.tables.readers import Reader
from limitguard.schedcfg.tables.releases import Release
from tests.unit.schedcfg.helpers import run_kind

BY_KIND: dict[str, ArgsKind] = {entry.kind: entry for entry in KINDS}
BY_PLUGIN: dict[str, ArgsKind] = {entry.plugin: entry for entry in KINDS}
NEWEST = f"koord-scheduler@{NEWEST_BUILD.version}"
READER = BUILDS[NEWEST].reader_for(Release())
ARGS = "args"


def reader_of(spec: str) -> Reader:
    """The reader a koord-scheduler build (``koord-scheduler@v1.7.0``) is: its args judged by it."""
    return BUILDS[spec].reader_for(Release())


def run(kind: str, args: dict[str, Any], spec: str = NEWEST) -> tuple[list[Finding], dict[str, Any]]:
    """All findings for ``args`` of ``kind`` (paths below ``args``) and the defaulted args."""
    return run_kind(BY_KIND[kind], args, reader_of(spec))


def of(kind: str, args: dict[str, Any], severity: str, spec: str = NEWEST) -> list[str]:
    return [str(f) for f in run(kind, args, spec)[0] if f.severity == severity]


def errors(kind: str, args: dict[str, Any], spec: str = NEWEST) -> list[str]:
    return of(kind, args, "error", spec)


def warnings(kind: str, args: dict[str, Any]) -> list[str]:
    return of(kind, args, "warning")


def defaulted(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    findings, out = run(kind, args)
    assert [f for f in findings if f.severity == "error"] == [], findings
    return out
