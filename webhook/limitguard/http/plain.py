"""The plain HTTP mode: the same answers, limits and refusals with aiohttp's public API only.

`limitguard serve --http-mode plain`, and the fallback where the fast mode (limitguard.http.fast)
was not tested with the installed aiohttp (limitguard.http.modes). Each connection is aiohttp's
own protocol, made by the runner's low-level server (`web.Server`, a protocol factory), with a
`PlainConnection` in front of it that holds the connection's place in the limits and times its
headers; the requests go through the app's own dispatch, and every answer is a `web.Response`.

What the fast mode reads from aiohttp's request loop, this one keeps itself: a connection is
answering from the end of a request's head until the app's `on_response_prepare` signal for its
answer (a public hook, run just before the answer is written), and between requests after that,
unless the answer closes the connection. A connection told to close without lingering (a stalled or
dropped body) is closed by its transport once the answer is written, instead of by aiohttp after its
lingering read.

What it costs against the fast mode (docs/benchmarks.md): the app's dispatch per request (a `getpid`
on CPython 3.11), aiohttp's response building, one more object a connection and one more call a
read, and the signal per answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web

from limitguard.http.limits import HEADERS_END, BoundedConnection, PeerConnections


class PlainConnection(BoundedConnection, asyncio.Protocol):
    """*handler* (aiohttp's connection protocol) behind the limits: admitted, its headers timed."""

    __slots__ = (
        *BoundedConnection.BOUNDED_SLOTS,
        "_close_once_answered",
        "_loop",
        "_writing_paused",
        "answering",
        "handler",
        "transport",
    )

    def __init__(
        self, handler: asyncio.Protocol, connections: PeerConnections, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._bound_by(connections, loop.call_later)
        self._loop = loop
        self.handler = handler
        self.transport: asyncio.Transport | None = None
        self.answering = False  # from the end of a request's head until its answer is prepared
        self._close_once_answered = False
        self._writing_paused = False

    @property
    def waiting(self) -> bool:
        return self._in_headers or not self.answering

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self._admitted(transport):
            return
        self.transport = transport  # type: ignore[assignment]  # a stream transport (create_server)
        self.handler.connection_made(transport)
        self._time_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._released():
            return  # refused in connection_made
        self.transport = None
        self.handler.connection_lost(exc)
        self._closed()

    def data_received(self, data: bytes) -> None:
        if not self._in_headers:
            if self.answering:
                self.handler.data_received(data)  # a body: the endpoint's body timeout bounds it
                return
            # between requests: this is the next request's first byte
            if HEADERS_END in data:  # and the whole head (the usual request): nothing to time
                self.answering = True
                self.handler.data_received(data)
                return
            self._time_headers()
        self._scan_headers(data)
        if not self._in_headers:
            self.answering = True
        self.handler.data_received(data)

    def eof_received(self) -> bool | None:
        return self.handler.eof_received()

    def pause_writing(self) -> None:
        self._writing_paused = True
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self._writing_paused = False
        self.handler.resume_writing()  # aiohttp's drain wakes first, then a pending close (FIFO)
        if self._close_once_answered:
            self._loop.call_soon(self._close_when_written)

    def answered(self, keeps_connection: bool) -> None:
        """The answer to the current request is about to be written (the app's prepare signal)."""
        if keeps_connection:
            self.answering = False  # the request loop goes on to the next request
        elif self._close_once_answered:
            self._loop.call_soon(self._close_when_written)
        # else aiohttp closes the connection once it has read what it lingers for

    def close_without_lingering(self) -> None:
        self._close_once_answered = True

    def _close_when_written(self) -> None:
        """After the answer's write: aiohttp writes a small answer in the same step as its prepare
        signal, and a large one waits until writing resumes (then this runs again)."""
        transport = self.transport
        if transport is not None and not self._writing_paused:
            transport.close()  # sends what is buffered, then closes

    def abort(self) -> None:
        transport = self.transport
        if transport is not None:
            transport.abort()


def connections(
    server: web.Server, app: web.Application, limited: PeerConnections, loop: asyncio.AbstractEventLoop
) -> Callable[[], asyncio.Protocol]:
    """Each accepted connection's protocol: the low-level server's own, behind a PlainConnection.
    Its idle timeout and lingering are the runner's (limitguard.http.site.limited_runner)."""
    return lambda: PlainConnection(server(), limited, loop)


def connection_of(request: web.BaseRequest) -> PlainConnection | None:
    """The PlainConnection *request* came on (None once it is gone): its transport's protocol,
    behind the listener's buffered reads (limitguard.http.reads)."""
    transport = request.transport
    if transport is None:
        return None
    protocol = transport.get_protocol()
    connection = getattr(protocol, "handler", protocol)
    return connection if isinstance(connection, PlainConnection) else None


async def _answered(request: web.BaseRequest, response: web.StreamResponse) -> None:
    connection = connection_of(request)
    if connection is not None:
        keeps = response.keep_alive
        connection.answered(bool(request.keep_alive if keeps is None else keeps))


def prepare_app(app: web.Application) -> None:
    """The signal that tells each connection its request was answered."""
    app.on_response_prepare.append(_answered)


def json_answer(request: web.BaseRequest, body: bytes) -> web.StreamResponse:
    return web.Response(body=body, content_type="application/json")
