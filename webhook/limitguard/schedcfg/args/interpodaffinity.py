"""InterPodAffinityArgs: hardPodAffinityWeight in [0, 100] (the schema holds the range)."""

from __future__ import annotations

from typing import Any

from ..report import Finding
from ..rules.releases import Release
from .kind import ArgsKind


def default(args: dict[str, Any], _path: str, _release: Release) -> list[Finding]:
    args.setdefault("hardPodAffinityWeight", 1)
    return []


ARGS = ArgsKind("InterPodAffinityArgs", "InterPodAffinity", default=default)
