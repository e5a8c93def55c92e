"""Shared fixtures: certificates and a real limitguard server over TLS on 127.0.0.1 (limitguard.testing.server),
served in each HTTP mode for the HTTP suite (HTTP_CONTRACT)."""

from __future__ import annotations

import contextlib
import fnmatch
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
from limitguard.http.modes import FAST, HTTP_MODES, HttpMode
from limitguard.state.store import ClusterState
from limitguard.testing.server import app_services, client_context, serving

# Hypothesis verdicts must not depend on machine speed: no per-example deadline (200 ms by default)
# and no "too slow" health check. Tests that set their own settings inherit this profile.
settings.register_profile("machine-independent", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("machine-independent")

# The HTTP suite: every test of these files that serves (through the `http_mode` fixture) runs once in
# each HTTP mode (limitguard.http.modes), so the fast and the plain mode are held to the same answers,
# limits and refusals. Paths relative to tests/; the rest of the suite serves in the fast mode.
HTTP_CONTRACT = (
    "integration/http/*",
    "integration/extender/*",
    "integration/admission/test_http.py",
    "integration/admission/test_forward.py",
    "integration/admission/test_*_http.py",
    "integration/test_serve_bounds.py",
    "unit/http/test_limits.py",
    "unit/http/test_heap.py",
)
TESTS = Path(__file__).resolve().parent


def in_http_contract(path: Path) -> bool:
    relative = path.resolve().relative_to(TESTS).as_posix()
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in HTTP_CONTRACT)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "http_mode" in metafunc.fixturenames and in_http_contract(metafunc.definition.path):
        metafunc.parametrize("http_mode", list(HTTP_MODES), indirect=True)


@pytest.fixture(scope="module")
def http_mode(request: pytest.FixtureRequest) -> HttpMode:
    """The HTTP mode a test serves in: each in turn for the HTTP suite, else the fast one (module-scoped
    so that a module's shared server can be served in it too)."""
    return HTTP_MODES[request.param] if hasattr(request, "param") else FAST


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
async def start_server(cert_dir: Path, http_mode: HttpMode) -> AsyncIterator[Callable[..., Any]]:
    """Start limitguard's real app over TLS, in *http_mode*; returns a RunningServer with a verifying client."""
    servers = contextlib.AsyncExitStack()
    sessions: list[aiohttp.ClientSession] = []

    async def start(state: ClusterState, config: Config | None = None, **settings: Any) -> RunningServer:
        settings.setdefault("http_mode", http_mode)
        served = await servers.enter_async_context(serving(app_services(state, config, **settings), cert_dir))
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_context(cert_dir)))
        sessions.append(session)
        return RunningServer(served.url, session, state)

    yield start
    for session in sessions:
        await session.close()
    await servers.aclose()
