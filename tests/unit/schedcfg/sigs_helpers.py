"""Running one scheduler-plugins args kind as the validator does: schema, then defaulting, then its rules,
as one build of the scheduler reads them (default: the newest release)."""

from __future__ import annotations

from typing import Any

from limitguard.schedcfg.args.kind import ArgsKind
from limitguard.schedcfg.args.sigs import KINDS, NEWEST_BUILD, UNRELEASED_KINDS
from limitguard.schedcfg.report import Finding
from limitguard.schedcfg.schedulers import BUILDS
from limitguard.schedcfg.tables.releases import Release
from tests.unit.schedcfg.helpers import run_kind

BY_KIND: dict[str, ArgsKind] = {entry.kind: entry for entry in KINDS}
BY_PLUGIN: dict[str, ArgsKind] = {entry.plugin: entry for entry in KINDS}
#: The kinds as the project's development branch has them (no release yet).
UNRELEASED: dict[str, ArgsKind] = {entry.kind: entry for entry in UNRELEASED_KINDS}
NEWEST = f"scheduler-plugins@{NEWEST_BUILD.version}"
MAIN = "scheduler-plugins@main"
READER = BUILDS[NEWEST].reader_for(Release())
ARGS = "args"
#: Valid NodeMetadataArgs (only scheduler-plugins' development branch has the plugin).
NODE_METADATA_ARGS: dict[str, Any] = {
    "metadataKey": "k",
    "metadataSource": "Label",
    "metadataType": "Number",
    "scoringStrategy": "Highest",
}


def run(
    kind: str, args: dict[str, Any], kinds: dict[str, ArgsKind] = BY_KIND, spec: str | None = None
) -> tuple[list[Finding], dict[str, Any]]:
    """All findings for ``args`` of ``kind`` (paths below ``args``) and the defaulted args, as build
    ``spec`` reads them (default: the development branch for its kinds, else the newest release)."""
    spec = spec or (MAIN if kinds is UNRELEASED else NEWEST)
    scheduler = BUILDS[spec]
    entry = {e.kind: e for e in scheduler.build.kinds}[kind]
    return run_kind(entry, args, scheduler.reader_for(Release()))


def errors(
    kind: str, args: dict[str, Any], kinds: dict[str, ArgsKind] = BY_KIND, spec: str | None = None
) -> list[str]:
    return [str(f) for f in run(kind, args, kinds, spec)[0] if f.severity == "error"]


def warnings(kind: str, args: dict[str, Any]) -> list[str]:
    return [str(f) for f in run(kind, args)[0] if f.severity == "warning"]


def defaulted(
    kind: str, args: dict[str, Any], kinds: dict[str, ArgsKind] = BY_KIND, spec: str | None = None
) -> dict[str, Any]:
    findings, out = run(kind, args, kinds, spec)
    assert [f for f in findings if f.severity == "error"] == [], findings
    return out
