"""Test-suite support: the repository paths, fixture loading, hang guard and the shared builders.

The builders themselves live in limitguard.testing.builders (the benchmarks use them too); they are
re-exported here so a test imports everything it needs from one place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from limitguard.testing.builders import (
    binding,
    container,
    make_namespace,
    make_node,
    make_pod,
    namespace,
    node,
    node_write,
    pod,
    pod_create,
    resize,
    review,
)
from limitguard.testing.examples import LEDGER_NEVER_EXPIRES  # states whose verdicts are not about expiry
from limitguard.testing.server import HANG_GUARD_SECONDS  # the one hang guard (see there)

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def fixture(name: str) -> Any:
    """A file from tests/fixtures (JSON or YAML), parsed."""
    text = (FIXTURES / name).read_text()
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


__all__ = [
    "FIXTURES",
    "HANG_GUARD_SECONDS",
    "LEDGER_NEVER_EXPIRES",
    "REPO",
    "binding",
    "container",
    "fixture",
    "make_namespace",
    "make_node",
    "make_pod",
    "namespace",
    "node",
    "node_write",
    "pod",
    "pod_create",
    "resize",
    "review",
]
