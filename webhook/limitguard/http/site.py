"""The HTTPS listener: an app's runner served on a socket whose connections are bounded.

`LimitedSite` is what aiohttp's TCPSite is, with each accepted connection made by the app's HTTP mode
(limitguard.http.modes) and counted in the site's `PeerConnections` (limitguard.http.limits), the TLS
handshake given the header deadline, and each connection's reads taken through the listener's one
buffer (limitguard.http.reads). It uses aiohttp's public API only: a `web.BaseSite` that keeps what
it needs in attributes of its own, and the runner's `server` (a protocol factory) and `app`. So the
runner's `addresses`, which reads an attribute aiohttp's own sites set, does not list it: its port
is `LimitedSite.port`.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from aiohttp import web

from limitguard.http import heap
from limitguard.http.eventloop import CallLater
from limitguard.http.limits import LINGER_SECONDS, PeerConnections, ServingLimits
from limitguard.http.modes import http_mode_of
from limitguard.http.reads import BufferedReads, SharedReadBuffer
from limitguard.http.refusals import Refusals


def limited_runner(
    app: web.Application, limits: ServingLimits, *, lingering_seconds: float = LINGER_SECONDS, **kwargs: Any
) -> web.AppRunner:
    """The runner of *app* for a LimitedSite, with what its connections are made with in either mode:
    the idle timeout, how long to read and drop the rest of an unread body, no access log."""
    return web.AppRunner(
        app,
        access_log=None,
        keepalive_timeout=limits.idle_timeout_seconds,
        lingering_time=lingering_seconds,
        **kwargs,
    )


class LimitedSite(web.BaseSite):
    """aiohttp's TCPSite with bounded connections, served in the app's HTTP mode."""

    __slots__ = ("_backlog_size", "_host", "_listener", "_port", "_served", "_tls", "connections")

    def __init__(
        self,
        runner: web.AppRunner,
        host: str,
        port: int,
        *,
        limits: ServingLimits,
        ssl_context: ssl.SSLContext | None = None,
        backlog: int = 128,
        call_later: CallLater | None = None,
        refusals: Refusals | None = None,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._served = runner
        self._host, self._port = host, port
        self._tls = ssl_context
        self._backlog_size = backlog
        self._listener: asyncio.Server | None = None
        self.connections = PeerConnections(limits, call_later, refusals)

    @property
    def name(self) -> str:
        return f"https://{self._host}:{self._port}"

    @property
    def port(self) -> int:
        """The port it listens on, once started (the one chosen for port 0)."""
        assert self._listener is not None, "not started"
        port: int = self._listener.sockets[0].getsockname()[1]
        return port

    async def start(self) -> None:
        await super().start()  # the runner now knows this site, and stops it on cleanup
        loop = asyncio.get_running_loop()
        server, app = self._served.server, self._served.app
        assert server is not None  # BaseSite checked: the runner is set up
        connection = http_mode_of(app).connections(server, app, self.connections, loop)
        heap.keep_large_blocks_apart()
        reads = SharedReadBuffer()
        accepted = heap.map_io_blocks if self._tls else heap.keep_large_blocks_apart

        def protocol() -> BufferedReads:
            accepted()  # the TLS layer's own buffer, allocated next, is mapped apart
            return BufferedReads(connection(), reads)

        header_timeout = self.connections.limits.header_timeout_seconds
        tls = {"ssl_handshake_timeout": header_timeout, "ssl_shutdown_timeout": header_timeout}
        self._listener = await loop.create_server(
            protocol,
            self._host,
            self._port,
            ssl=self._tls,
            backlog=self._backlog_size,
            reuse_address=True,
            **(tls if self._tls else {}),
        )

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        await super().stop()
