"""The real limitguard app over TLS on 127.0.0.1, as the chart's Deployment runs it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from tests.support import HANG_GUARD_SECONDS
from limitguard.certs import generate as certs
from limitguard.admission.validating import Validator
from limitguard.state.store import ClusterState
from limitguard.core.config import Config
from limitguard.http.metrics import Metrics
from limitguard.http.app import ServerSettings, Services, create_app
from limitguard.http.tls import CertificateReloader, server_context


def services(state: ClusterState, config: Config) -> Services:
    """build_services when every handler imports; else the validating handler alone."""
    try:
        from limitguard.cli.serve import build_services
    except ImportError:
        return Services(state, config, {"validate": Validator(state, config)}, Metrics(state, config))
    return build_services(config, state, ServerSettings(body_timeout_seconds=HANG_GUARD_SECONDS))


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


@dataclass
class Running:
    port: int
    reloader: CertificateReloader


@contextlib.asynccontextmanager
async def serve(
    cert_dir: Path, reload_sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
) -> AsyncIterator[Running]:
    state, config = ClusterState(), Config()
    cert_file, key_file = cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY
    context = server_context(cert_file, key_file)
    reloader = CertificateReloader(context, cert_file, key_file, sleep=reload_sleep)
    runner = web.AppRunner(create_app(services(state, config)), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context, backlog=1024)
    await site.start()
    reloader.start()
    try:
        yield Running(runner.addresses[0][1], reloader)
    finally:
        await reloader.stop()
        await runner.cleanup()
