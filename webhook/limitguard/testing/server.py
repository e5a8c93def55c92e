"""The one harness that serves limitguard's real app over real TLS on 127.0.0.1 for tests and benchmarks.

`serving()` starts `create_app(services)` on an ephemeral loopback port with the certificate pair
of a cert directory (as `limitguard certs` writes it), optionally with the CertificateReloader the
chart's Deployment runs, and cleans everything up on exit. Callers on a synchronous thread use
limitguard.testing.threaded, which runs this same harness on a loop of its own.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from limitguard.certs import generate as certs
from limitguard.cli.startup import build_services
from limitguard.clock import Clock
from limitguard.core.config import Config
from limitguard.http.app import ServerSettings, Services, create_app
from limitguard.http.site import LimitedSite, limited_runner
from limitguard.http.tls import CertificateReloader, server_context
from limitguard.state.store import ClusterState
from limitguard.testing.clientcerts import client_context as client_context  # the suite's one client

# The one bound on waiting in tests: it only ends a stuck run, so it is far longer than anything
# takes on a loaded single core, and never decides a verdict. Test servers use it as their body
# timeout too, so a starved event loop cannot turn a good request into a 408.
HANG_GUARD_SECONDS = 120.0


def app_services(state: ClusterState, config: Config | None = None, **settings: Any) -> Services:
    """Every route `limitguard serve` builds, with the hang guard as the body timeout unless given."""
    settings.setdefault("body_timeout_seconds", HANG_GUARD_SECONDS)
    return build_services(config or Config(), state, ServerSettings(**settings))


@dataclass
class Serving:
    port: int
    runner: web.AppRunner
    reloader: CertificateReloader | None

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}"


@asynccontextmanager
async def serving(
    services: Services,
    cert_dir: Path,
    *,
    reload_sleep: Callable[[float], Awaitable[object]] | None = None,
    backlog: int = 128,
    trust_listeners: Sequence[Callable[[], None]] = (),
    pair_listeners: Sequence[Callable[[], None]] = (),
    clock: Clock | None = None,
    wall_time: Callable[[], float] = time.time,
    new_ca_delay: float = 0.0,
) -> AsyncIterator[Serving]:
    """Serve *services* over TLS; with *reload_sleep*, a CertificateReloader waits with it between checks
    (and then tells *trust_listeners* and *pair_listeners*; *clock*, *wall_time* and *new_ca_delay* as
    it takes them). The CAs of `services.peer_gates` verify client certificates, as in serve."""
    cert_file, key_file = cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY
    gates = services.peer_gates.values()
    client_cas = list(dict.fromkeys(gate.ca_file for gate in gates))
    context = server_context(cert_file, key_file, client_cas)
    reloader = None
    if reload_sleep is not None:
        reloader = CertificateReloader(
            context,
            cert_file,
            key_file,
            sleep=reload_sleep,
            client_cas=client_cas,
            trust_listeners=[*(gate.reload for gate in gates), *trust_listeners],
            pair_listeners=pair_listeners,
            clock=clock,
            wall_time=wall_time,
            new_ca_delay=new_ca_delay,
        )
    runner = limited_runner(create_app(services), services.settings.limits)
    await runner.setup()
    try:
        site = LimitedSite(
            runner, "127.0.0.1", 0, limits=services.settings.limits, ssl_context=context, backlog=backlog
        )
        await site.start()
        if reloader is not None:
            reloader.start()
        try:
            yield Serving(site.port, runner, reloader)
        finally:
            if reloader is not None:
                await reloader.stop()
    finally:
        await runner.cleanup()
