"""limitguard's real app over TLS on its own event-loop thread, for synchronous callers
(hypothesis drives plain functions, the fuzz benchmark measures memory; the server must keep running
between calls). It runs limitguard.testing.server's harness on that loop."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson

from limitguard.core.config import Config
from limitguard.state.store import ClusterState
from limitguard.testing.server import HANG_GUARD_SECONDS, app_services, client_context, serving


class ThreadedServer:
    def __init__(self, cert_dir: Path, state: ClusterState, config: Config, **settings: object) -> None:
        self.cert_dir = cert_dir
        self.services = app_services(state, config, **settings)
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._stack = contextlib.AsyncExitStack()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=HANG_GUARD_SECONDS)

    async def _start(self) -> None:
        served = await self._stack.enter_async_context(serving(self.services, self.cert_dir))
        self.port = served.port

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stack.aclose(), self.loop).result(timeout=HANG_GUARD_SECONDS)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=HANG_GUARD_SECONDS)

    def connection(self, timeout: float = HANG_GUARD_SECONDS) -> http.client.HTTPSConnection:
        context = client_context(self.cert_dir)
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


@contextlib.contextmanager
def running(
    cert_dir: Path, state: ClusterState, config: Config, **settings: object
) -> Iterator[ThreadedServer]:
    server = ThreadedServer(cert_dir, state, config, **settings)
    server.start()
    try:
        yield server
    finally:
        server.stop()
