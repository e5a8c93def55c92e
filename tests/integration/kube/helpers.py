"""Helpers for the live-feed tests: hang guards, fast settings, a connected limitguard.

Time in these tests is a FakeClock (limitguard.clock): backoffs jump instead of waiting, a ledger entry
expires when the test advances the clock, and nothing a test asserts depends on how fast it ran.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from limitguard.clock import Clock
from limitguard.http.metrics import Metrics
from limitguard.kube.client import KubeClient
from limitguard.kube.leader import ElectionTiming, Elector
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.kube.livefeed import LiveFeed
from limitguard.kube.reflector import ReflectorSettings
from limitguard.state.store import ClusterState
from limitguard.testing.clock import FakeClock, ManualClock
from limitguard.testing.kubeconfig import TOKEN, write_kubeconfig
from limitguard.testing.server import HANG_GUARD_SECONDS  # only ever reached by a bug, never a verdict

T = TypeVar("T")

FAST = ReflectorSettings(
    page_size=3,
    backoff_initial_seconds=0.01,
    backoff_max_seconds=0.05,
    healthy_watch_seconds=60.0,  # of fake time: every stream end goes through the backoff (holdable)
    watch_timeout_seconds=(30, 30),
)


async def eventually(condition: Callable[[], object], what: str, timeout: float = HANG_GUARD_SECONDS) -> None:
    """Poll *condition* until it holds; the feed works on its own schedule.

    The timeout is a hang guard only: a correct run meets the condition long before it on any
    machine, so it turns a bug into a failure instead of a hung suite, and never decides a verdict.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"hang guard: {timeout:g}s passed waiting for: {what}")
        await asyncio.sleep(0.005)


async def within_hang_guard(awaitable: Awaitable[T], what: str) -> T:
    """Await *awaitable* (an event, a stop) with the same hang guard as `eventually`."""
    try:
        return await asyncio.wait_for(awaitable, HANG_GUARD_SECONDS)
    except TimeoutError:
        raise AssertionError(f"hang guard: {HANG_GUARD_SECONDS:g}s passed waiting for: {what}") from None


async def all_watching(server: Any) -> None:
    """Every kind's watch is open: only then does close_watches() reach all streams (a reflector
    still listing would open its watch right after, and the fault would miss it)."""
    await eventually(
        lambda: all(server.open_watches(kind) == 1 for kind in ("nodes", "pods", "namespaces")),
        "all watches open",
    )


class HeldSleeps:
    """A clock whose sleeps first wait for a gate: retries held while time itself moves on."""

    def __init__(self, inner: Clock, gate: asyncio.Event) -> None:
        self.inner = inner
        self.gate = gate

    def now(self) -> float:
        return self.inner.now()

    async def sleep(self, seconds: float) -> None:
        await self.gate.wait()
        await self.inner.sleep(seconds)


class Connected:
    """limitguard's state, metrics and feed, connected to the fake API server, on a FakeClock."""

    def __init__(self, state: ClusterState, metrics: Metrics, feed: LiveFeed, clock: FakeClock) -> None:
        self.state = state
        self.metrics = metrics
        self.feed = feed
        self.clock = clock

    def counter(self, name: str, **labels: str) -> float:
        value = self.metrics.registry.get_sample_value(name, labels)
        return value or 0.0

    def resource_version(self, kind: str) -> int:
        text = self.feed.reflectors[kind].resource_version
        return int(text) if text else 0

    def hold_retries(self) -> asyncio.Event:
        """Make every reflector's backoffs wait for the returned event (a fault window).

        Only the sleeps are held: the clock (and with it the ledger) can still be advanced.
        """
        release = asyncio.Event()
        for reflector in self.feed.reflectors.values():
            reflector.clock = HeldSleeps(reflector.clock, release)
        return release

    async def applied(self, kind: str, rv: int) -> None:
        """Wait until the *kind* reflector has applied everything up to *rv*."""
        await eventually(lambda: self.resource_version(kind) >= rv, f"{kind} applied up to rv {rv}")


__all__ = [
    "FAST",
    "HANG_GUARD_SECONDS",
    "TOKEN",
    "Connected",
    "HeldSleeps",
    "all_watching",
    "eventually",
    "within_hang_guard",
    "write_kubeconfig",
]


def lease_elector(
    client: KubeClient, namespace: str, name: str, identity: str, clock: ManualClock, **kwargs: Any
) -> Elector:
    """An elector on the Lease ``namespace/name`` with default timings, driven by ``clock``."""
    return Elector(
        KubeLeaseApi(client, namespace, name, 30.0),
        namespace,
        name,
        identity,
        f"{identity}:8443",
        ElectionTiming(),
        now=clock.now,
        sleep=clock.sleep,
        **kwargs,
    )
