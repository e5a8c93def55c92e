"""NetworkOverheadArgs of scheduler-plugins (apis/config/v1 SetDefaults_NetworkOverheadArgs; pkg/networkaware/
networkoverhead New checks nothing else; tag v0.34.7)."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding
from ...tables.readers import Reader
from ..kind import ArgsKind, no_rules
from .common import SCHEMA_DIR, drop_nulls, empty_list_defaulted

DEFAULT_NAMESPACES = ["default"]
DEFAULTS = {"weightsName": "UserDefined", "networkTopologyName": "nt-default"}


def default_namespaces(args: dict[str, Any], path: str) -> list[Finding]:
    """``len(namespaces) == 0`` -> ["default"]; an explicit empty list is reported."""
    findings: list[Finding] = []
    if args.get("namespaces") == []:
        findings.append(empty_list_defaulted(path_join(path, "namespaces"), DEFAULT_NAMESPACES))
    if args.get("namespaces") in (None, []):
        args["namespaces"] = list(DEFAULT_NAMESPACES)
    return findings


def default(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    return default_namespaces(args, path)


ARGS = ArgsKind(
    "NetworkOverheadArgs", "NetworkOverhead", no_rules, default, in_tree=False, schema_dir=SCHEMA_DIR
)
