"""Shared fixtures: certificates and a real limitguard server over TLS on 127.0.0.1 (limitguard.testing.server)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from hypothesis import HealthCheck, settings

from limitguard.certs import generate as certs
from limitguard.core.config import Config
from limitguard.state.store import ClusterState
from limitguard.testing.server import app_services, client_context, serving

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


@pytest.fixture
async def start_server(cert_dir: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start limitguard's real app over TLS; returns a RunningServer with a verifying client."""
    servers = contextlib.AsyncExitStack()
    sessions: list[aiohttp.ClientSession] = []

    async def start(state: ClusterState, config: Config | None = None, **settings: Any) -> RunningServer:
        served = await servers.enter_async_context(serving(app_services(state, config, **settings), cert_dir))
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_context(cert_dir)))
        sessions.append(session)
        return RunningServer(served.url, session, state)

    yield start
    for session in sessions:
        await session.close()
    await servers.aclose()
