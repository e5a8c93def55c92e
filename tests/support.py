"""Test-suite support: the repository paths, fixture loading, hang guard and the shared builders.

The builders themselves live in limitguard.testing.builders (the benchmarks use them too); they are
re-exported here so a test imports everything it needs from one place.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from limitguard.http.eventloop import EventLoopError, loop_factory
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


LoopFactories = dict[str, Callable[[], asyncio.AbstractEventLoop]]


def _serving_loops() -> LoopFactories:
    loops = {}
    for choice in ("uvloop", "asyncio"):
        with contextlib.suppress(EventLoopError):  # uvloop is not installed on every platform
            name, factory = loop_factory(choice)
            loops[name] = factory
    return loops


# Every event loop `limitguard serve` may run on here: the tests of what crosses the loop (TLS, body
# limits and timeouts, stalled connections, races, the live feed, forwarding, certificate rotation)
# run once on each, through the `pytest_asyncio_loop_factories` hook of their folder's conftest.
SERVING_LOOPS = _serving_loops()


def serving_loops_for(item: Any, *file_names: str) -> LoopFactories:
    """The hook's answer for a folder where only the tests in *file_names* cross the event loop:
    every serving loop for those, asyncio's own for the rest."""
    if item.path.name in file_names:
        return SERVING_LOOPS
    return {"asyncio": asyncio.new_event_loop}


# What the apiserver's DefaultTolerationSeconds plugin gives every pod (copy before changing one).
APISERVER_TOLERATIONS = (
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
)


def fixture(name: str) -> Any:
    """A file from tests/fixtures (JSON or YAML), parsed."""
    text = (FIXTURES / name).read_text()
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


def resizing_pod(name: str = "resizing", **spec_fields: Any) -> dict[str, Any]:
    """A pending pod resizing container a 4 -> 1 cpu and b 1 -> 4, not yet actuated: 8 cpu of
    limits by component-helpers v0.36.3 (each container's max(spec, status), summed) and 5 by
    v0.37.0-beta.0 (the whole pod's max(sum of spec, sum of actuated); resource/helpers.go)."""
    statuses = [
        {"name": "a", "resources": {"limits": {"cpu": "4"}}},
        {"name": "b", "resources": {"limits": {"cpu": "1"}}},
    ]
    return pod(
        name,
        containers=[container("a", limits={"cpu": "1"}), container("b", limits={"cpu": "4"})],
        phase="Pending",
        status={"containerStatuses": statuses},
        **spec_fields,
    )


__all__ = [
    "APISERVER_TOLERATIONS",
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


def run_command(module: Any, argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """Run one CLI command module (its own parser, as limitguard's main builds it): exit code, stdout, stderr."""
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    code = module.run(parser.parse_args(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
