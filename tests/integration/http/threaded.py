"""limitguard's real app over TLS on its own event-loop thread, for synchronous callers
(hypothesis drives plain functions; the server must keep running between examples)."""

from __future__ import annotations

import asyncio
import http.client
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from aiohttp import web

from tests.support import HANG_GUARD_SECONDS
from limitguard.certs import generate as certs
from limitguard.state.store import ClusterState
from limitguard.core.config import Config
from limitguard.http.app import ServerSettings, create_app
from limitguard.cli.serve import build_services
from limitguard.http.tls import server_context


class ThreadedServer:
    def __init__(self, cert_dir: Path, state: ClusterState, config: Config, settings: ServerSettings) -> None:
        self.cert_dir = cert_dir
        self.services = build_services(config, state, settings)
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=HANG_GUARD_SECONDS)

    async def _start(self) -> None:
        self._runner = web.AppRunner(create_app(self.services), access_log=None)
        await self._runner.setup()
        context = server_context(self.cert_dir / certs.TLS_CERT, self.cert_dir / certs.TLS_KEY)
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(timeout=HANG_GUARD_SECONDS)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=HANG_GUARD_SECONDS)

    def connection(self, timeout: float = HANG_GUARD_SECONDS) -> http.client.HTTPSConnection:
        context = ssl.create_default_context(cafile=str(self.cert_dir / certs.CA_CERT))
        return http.client.HTTPSConnection("localhost", self.port, context=context, timeout=timeout)


class Client:
    """A keep-alive HTTPS client that reconnects when the server closed the connection."""

    def __init__(self, server: ThreadedServer) -> None:
        self.server = server
        self.connection = server.connection()

    def post(
        self, path: str, body: bytes, content_type: str | None = "application/json"
    ) -> tuple[int, bytes]:
        headers = {"Content-Type": content_type} if content_type else {}
        for attempt in range(2):
            try:
                self.connection.request("POST", path, body=body, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.connection.close()
                self.connection = self.server.connection()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def post_json(self, path: str, document: object) -> tuple[int, dict]:
        status, raw = self.post(path, orjson.dumps(document))
        return status, orjson.loads(raw)


@contextmanager
def running(
    cert_dir: Path, state: ClusterState, config: Config, **settings: object
) -> Iterator[ThreadedServer]:
    settings.setdefault("body_timeout_seconds", HANG_GUARD_SECONDS)
    server = ThreadedServer(cert_dir, state, config, ServerSettings(**settings))  # type: ignore[arg-type]
    server.start()
    try:
        yield server
    finally:
        server.stop()
