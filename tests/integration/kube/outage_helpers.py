"""A connected limitguard whose clock, stall deadlines and unwritten-entry rounds the test drives."""

from __future__ import annotations

import asyncio
from pathlib import Path

from limitguard.core.config import Config
from limitguard.http.metrics import Metrics
from limitguard.kube.livefeed import reflector_task_name, start_live_feed
from limitguard.kube.reflector import ReflectorSettings
from limitguard.kube.unwritten import UnwrittenSettings
from limitguard.state.store import ClusterState
from limitguard.testing.clock import FakeClock
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import Connected, eventually, write_kubeconfig

# Real watch timeouts (15-20 s, asked of the server) with fast retries: no stream ends by itself
# while a test runs, so every stall is one the test declared.
SETTINGS = ReflectorSettings(page_size=3, backoff_initial_seconds=0.01, backoff_max_seconds=0.05)
NEVER = 1e9  # the releaser's own loop never runs a round: the test calls round() itself


class StallTimer:
    """The reflectors' stall deadlines, fired by the test, per kind (reflector task name)."""

    def __init__(self) -> None:
        self.armed: list[tuple[str, float, asyncio.Future[None]]] = []

    def __call__(self, seconds: float) -> asyncio.Future[None]:
        task = asyncio.current_task()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.armed.append((task.get_name() if task else "", seconds, future))
        return future

    def _unfired(self, kind: str) -> list[asyncio.Future[None]]:
        name = reflector_task_name(kind)
        return [future for task, _, future in self.armed if task == name and not future.done()]

    def pending(self, kind: str) -> int:
        """The deadlines of *kind*'s reflector armed and not yet fired or cancelled."""
        return len(self._unfired(kind))

    def fire(self, kind: str) -> int:
        unfired = self._unfired(kind)
        for future in unfired:
            future.set_result(None)
        return len(unfired)


async def connect_driven(
    server: FakeApiServer,
    tmp_path: Path,
    *,
    horizon: float | None = None,
    clock: FakeClock | None = None,
) -> tuple[Connected, StallTimer]:
    url = await server.start()
    clock = clock or FakeClock()
    state = ClusterState(clock=clock)
    timer = StallTimer()
    unwritten = None
    if horizon is not None:
        unwritten = UnwrittenSettings(horizon_seconds=horizon, interval_seconds=NEVER)
    feed = await start_live_feed(
        state,
        write_kubeconfig(tmp_path, url),
        settings=SETTINGS,
        clock=clock,
        unwritten=unwritten,
        stall_sleep=timer,
    )
    metrics = Metrics(state, Config())
    feed.metrics = metrics
    await eventually(lambda: state.ready, "state ready")
    return Connected(state, metrics, feed, clock), timer
