"""Helpers for the live-feed tests: bounded waits, fast settings, a connected limitguard."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from limitguard.kube.livefeed import LiveFeed
from limitguard.kube.reflector import ReflectorSettings
from limitguard.state.store import ClusterState
from limitguard.http.metrics import Metrics

TOKEN = "test-token"
FAST = ReflectorSettings(
    page_size=3,
    backoff_initial_seconds=0.01,
    backoff_max_seconds=0.05,
    healthy_watch_seconds=60.0,  # every stream end goes through the backoff, where tests can hold it
    watch_timeout_seconds=(30, 30),
)


async def eventually(condition: Callable[[], object], what: str, timeout: float = 5.0) -> None:
    """Poll *condition* until it holds (bounded); the feed works on its own schedule."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for: {what}")
        await asyncio.sleep(0.005)


async def all_watching(server: Any) -> None:
    """Every kind's watch is open: only then does close_watches() reach all streams (a reflector
    still listing would open its watch right after, and the fault would miss it)."""
    await eventually(
        lambda: all(server.open_watches(kind) == 1 for kind in ("nodes", "pods", "namespaces")),
        "all watches open",
    )


def write_kubeconfig(directory: Path, server: str, token: str = TOKEN, ca_file: str | None = None) -> str:
    cluster = f"    server: {server}\n" + (f"    certificate-authority: {ca_file}\n" if ca_file else "")
    path = directory / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: fake\n  cluster:\n{cluster}"
        f"users:\n- name: tester\n  user:\n    token: {token}\n"
        "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: tester\n"
        "current-context: fake\n"
    )
    return str(path)


class Connected:
    """limitguard's state, metrics and feed, connected to the fake API server."""

    def __init__(self, state: ClusterState, metrics: Metrics, feed: LiveFeed) -> None:
        self.state = state
        self.metrics = metrics
        self.feed = feed

    def counter(self, name: str, **labels: str) -> float:
        value = self.metrics.registry.get_sample_value(name, labels)
        return value or 0.0

    def resource_version(self, kind: str) -> int:
        text = self.feed.reflectors[kind].resource_version
        return int(text) if text else 0

    def hold_retries(self) -> asyncio.Event:
        """Make every reflector's next backoff wait for the returned event (a fault window)."""
        release = asyncio.Event()

        async def held(seconds: float) -> None:
            await release.wait()

        for reflector in self.feed.reflectors.values():
            reflector._sleep = held
        return release

    async def applied(self, kind: str, rv: int) -> None:
        """Wait until the *kind* reflector has applied everything up to *rv*."""
        await eventually(lambda: self.resource_version(kind) >= rv, f"{kind} applied up to rv {rv}")
