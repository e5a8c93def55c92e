"""InterPodAffinityArgs: hardPodAffinityWeight in [0, 100] (the schema holds the range)."""

from __future__ import annotations

from typing import Any

from ..fields.findings import Finding
from ..tables.readers import Reader
from .kind import ArgsKind


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    args.setdefault("hardPodAffinityWeight", 1)
    return []


ARGS = ArgsKind("InterPodAffinityArgs", "InterPodAffinity", default=default)
