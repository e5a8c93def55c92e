"""SchedulingHintArgs (Koordinator v1.8.0: apis/config/v1 SetDefaults_SchedulingHintArgs,
apis/config/validation ValidateSchedulingHintArgs, called by plugins/schedulinghint New)."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls

DEFAULT_MAX_HINT_NODES = 100


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    args.setdefault("maxHintNodes", DEFAULT_MAX_HINT_NODES)
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    value = as_go_int(args.get("maxHintNodes"), 32)
    if value is not None and value <= 0:
        return [
            invalid(
                path_join(path, "maxHintNodes"), value, "must be a positive value", "koord.schedulinghint.max"
            )
        ]
    return []


ARGS = ArgsKind(
    "SchedulingHintArgs", "SchedulingHint", validate, default, in_tree=False, schema_dir=SCHEMA_DIR
)
