"""TopologicalSortArgs of scheduler-plugins (apis/config/v1 SetDefaults_TopologicalSortArgs; pkg/networkaware/
topologicalsort New checks nothing else; tag v0.34.7)."""

from __future__ import annotations

from typing import Any

from ...fields.findings import Finding
from ...tables.readers import Reader
from ..kind import ArgsKind, no_rules
from .common import SCHEMA_DIR, drop_nulls
from .networkoverhead import default_namespaces


def default(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    return default_namespaces(args, path)


ARGS = ArgsKind(
    "TopologicalSortArgs", "TopologicalSort", no_rules, default, in_tree=False, schema_dir=SCHEMA_DIR
)
