"""The real limitguard app over TLS on 127.0.0.1 with the chart Deployment's certificate reloader."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from limitguard.core.config import Config
from limitguard.state.store import ClusterState
from limitguard.testing.server import Serving, app_services, serving


class ReloaderTicks:
    """An injected sleep for CertificateReloader: the reloader checks only when `tick()` says.

    `tick()` returns once the reloader has run exactly one more check and is waiting again, so a
    test knows the new files were looked at, without sleeping or guessing an interval.
    """

    def __init__(self) -> None:
        self._waiting = asyncio.Event()  # the reloader sits in its sleep
        self._go = asyncio.Event()

    async def sleep(self, _interval: float) -> None:
        self._waiting.set()
        await self._go.wait()
        self._go.clear()

    async def tick(self) -> None:
        await self._waiting.wait()
        self._waiting.clear()
        self._go.set()
        await self._waiting.wait()  # back in sleep: check() ran in between


@contextlib.asynccontextmanager
async def serve(
    cert_dir: Path, reload_sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
) -> AsyncIterator[Serving]:
    services = app_services(ClusterState(), Config())
    async with serving(services, cert_dir, reload_sleep=reload_sleep, backlog=1024) as served:
        yield served
