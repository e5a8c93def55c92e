"""The real limitguard app over TLS on 127.0.0.1, as the chart's Deployment runs it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from limitguard.certs import generate as certs
from limitguard.admission.validating import Validator
from limitguard.state.store import ClusterState
from limitguard.core.config import Config
from limitguard.http.metrics import Metrics
from limitguard.http.app import Services, create_app
from limitguard.http.tls import CertificateReloader, server_context


def services(state: ClusterState, config: Config) -> Services:
    """build_services when every handler imports; else the validating handler alone."""
    try:
        from limitguard.cli.serve import build_services
    except ImportError:
        return Services(state, config, {"validate": Validator(state, config)}, Metrics(state, config))
    return build_services(config, state)


@dataclass
class Running:
    port: int
    reloader: CertificateReloader


@contextlib.asynccontextmanager
async def serve(cert_dir: Path, reload_interval: float = 2.0) -> AsyncIterator[Running]:
    state, config = ClusterState(), Config()
    cert_file, key_file = cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY
    context = server_context(cert_file, key_file)
    reloader = CertificateReloader(context, cert_file, key_file, interval=reload_interval)
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
