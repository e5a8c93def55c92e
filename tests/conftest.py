"""Shared fixtures: certificates and a real limitguard server over TLS on 127.0.0.1."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from hypothesis import HealthCheck, settings

from tests.support import HANG_GUARD_SECONDS
from limitguard.certs import generate as certs
from limitguard.state.store import ClusterState
from limitguard.core.config import Config
from limitguard.http.app import ServerSettings, create_app
from limitguard.cli.serve import build_services
from limitguard.http.tls import server_context

# Hypothesis verdicts must not depend on machine speed: no per-example deadline (200 ms by default)
# and no "too slow" health check. Tests that set their own settings inherit this profile.
settings.register_profile("machine-independent", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("machine-independent")


@pytest.fixture(scope="session")
def cert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("certs")
    certs.write(certs.generate(["localhost", "127.0.0.1"]), directory)
    return directory


@dataclass
class RunningServer:
    url: str
    session: aiohttp.ClientSession
    state: ClusterState

    async def post(self, path: str, body: Any, **kwargs: Any) -> tuple[int, Any]:
        data = orjson.dumps(body) if isinstance(body, (dict, list)) else body
        headers = kwargs.pop("headers", {"Content-Type": "application/json"})
        async with self.session.post(self.url + path, data=data, headers=headers, **kwargs) as response:
            raw = await response.read()
            return response.status, (orjson.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode())

    async def get(self, path: str) -> tuple[int, str]:
        async with self.session.get(self.url + path) as response:
            return response.status, await response.text()


def client_context(cert_dir: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert_dir / certs.CA_CERT))


@pytest.fixture
async def start_server(cert_dir: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start limitguard's real app over TLS; returns a RunningServer with a verifying client."""
    runners: list[web.AppRunner] = []
    sessions: list[aiohttp.ClientSession] = []

    async def start(state: ClusterState, config: Config | None = None, **settings: Any) -> RunningServer:
        settings.setdefault("body_timeout_seconds", HANG_GUARD_SECONDS)
        services = build_services(config or Config(), state, ServerSettings(**settings))
        runner = web.AppRunner(create_app(services), access_log=None)
        await runner.setup()
        context = server_context(cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_context(cert_dir)))
        sessions.append(session)
        return RunningServer(f"https://localhost:{port}", session, state)

    yield start
    for session in sessions:
        await session.close()
    for runner in runners:
        await runner.cleanup()
