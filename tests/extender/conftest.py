"""limitguard's real app with the extender routes, over TLS on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tests.conftest import RunningServer, client_context
from webhook import certs
from webhook.cluster.state import ClusterState
from webhook.core.config import Config
from webhook.server.app import ServerSettings, create_app
from webhook.server.run import build_services
from webhook.server.tls import server_context


@pytest.fixture
async def start_extender(cert_dir: Path) -> AsyncIterator[Callable[..., Any]]:
    runners: list[web.AppRunner] = []
    sessions: list[aiohttp.ClientSession] = []

    async def start(
        state: ClusterState, config: Config | None = None, max_body_bytes: int | None = None
    ) -> RunningServer:
        settings = (
            ServerSettings()
            if max_body_bytes is None
            else ServerSettings(extender_max_body_bytes=max_body_bytes)
        )
        app = create_app(build_services(config or Config(), state, settings))
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        context = server_context(cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        runners.append(runner)
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_context(cert_dir)))
        sessions.append(session)
        return RunningServer(f"https://localhost:{runner.addresses[0][1]}", session, state)

    yield start
    for session in sessions:
        await session.close()
    for runner in runners:
        await runner.cleanup()
