"""SySchedArgs of scheduler-plugins (apis/config/v1 SetDefaults_SySchedArgs; pkg/sysched New checks nothing
else; tag v0.34.7)."""

from __future__ import annotations

from typing import Any

from ...fields.findings import Finding
from ...tables.readers import Reader
from ..kind import ArgsKind, no_rules
from .common import SCHEMA_DIR, drop_nulls

DEFAULTS = {"defaultProfileNamespace": "default", "defaultProfileName": "all-syscalls"}


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    return []


ARGS = ArgsKind("SySchedArgs", "SySched", no_rules, default, in_tree=False, schema_dir=SCHEMA_DIR)
