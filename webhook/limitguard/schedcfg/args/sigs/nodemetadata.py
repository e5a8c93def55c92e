"""NodeMetadataArgs of scheduler-plugins, on its master branch only (commit 903da7df, 2026-08-16; no release
tag carries the plugin yet): apis/config/v1 SetDefaults_NodeMetadataArgs, pkg/nodemetadata New (an empty
timestampFormat for Timestamp values is RFC 3339 too) and apis/config/validation ValidateNodeMetadataArgs."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import UNRELEASED_SCHEMA_DIR, drop_nulls

RFC3339 = "2006-01-02T15:04:05Z07:00"
SOURCES = ("Label", "Annotation")
TYPES = ("Number", "Timestamp")
STRATEGIES = ("Highest", "Lowest", "Newest", "Oldest")
#: metadataType -> the strategies that compare its values.
STRATEGIES_OF = {"Number": ("Highest", "Lowest"), "Timestamp": ("Newest", "Oldest")}


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    if args.get("metadataType") == "Timestamp" and args.get("timestampFormat", "") == "":
        args["timestampFormat"] = RFC3339
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    key = args.get("metadataKey", "")
    if key == "":
        findings.append(
            invalid(path_join(path, "metadataKey"), key, "metadataKey cannot be empty", "sigs.nodemetadata")
        )
    source = args.get("metadataSource", "")
    if isinstance(source, str) and source not in SOURCES:
        findings.append(
            invalid(
                path_join(path, "metadataSource"),
                source,
                'metadataSource must be either "Label" or "Annotation"',
                "sigs.nodemetadata",
            )
        )
    kind = args.get("metadataType", "")
    if isinstance(kind, str) and kind not in TYPES:
        findings.append(
            invalid(
                path_join(path, "metadataType"),
                kind,
                'metadataType must be either "Number" or "Timestamp"',
                "sigs.nodemetadata",
            )
        )
    strategy = args.get("scoringStrategy", "")
    strategy_path = path_join(path, "scoringStrategy")
    if isinstance(strategy, str) and strategy not in STRATEGIES:
        findings.append(
            invalid(
                strategy_path,
                strategy,
                'scoringStrategy must be one of "Highest", "Lowest", "Newest", or "Oldest"',
                "sigs.nodemetadata",
            )
        )
    elif kind in STRATEGIES_OF and strategy not in STRATEGIES_OF[kind]:
        other = "Timestamp" if kind == "Number" else "Number"
        pair = " and ".join(f'"{s}"' for s in STRATEGIES_OF[other])
        findings.append(
            invalid(
                strategy_path,
                strategy,
                f'scoringStrategy {pair} are only valid for metadataType "{other}"',
                "sigs.nodemetadata",
            )
        )
    return findings


ARGS = ArgsKind(
    "NodeMetadataArgs", "NodeMetadata", validate, default, in_tree=False, schema_dir=UNRELEASED_SCHEMA_DIR
)
