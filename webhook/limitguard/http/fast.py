"""The fast HTTP mode: the one module that reaches into aiohttp's internals.

Every contact limitguard has with aiohttp's private parts is here, and each earns its place on the
request path (docs/benchmarks.md has the figures). Nothing else in the product imports aiohttp's
internal modules, reads a private attribute of aiohttp's or stands in for one of its objects
(tests/unit/http/test_aiohttp_contained.py checks the source); limitguard.http.plain serves the
same answers with aiohttp's public API only, and limitguard.http.modes chooses between the two
once, at start-up:

- `BoundedRequestHandler` extends aiohttp's connection protocol (`web_protocol.RequestHandler`)
  with the limits' `BoundedConnection`. It reads the request loop's `_waiter` (the connection is
  between requests exactly while it is pending) and `_reading_paused`, and writes
  `_lingering_time` and `_keepalive` to close a refused connection at once; it is made with the
  low-level server's settings (`_kwargs`), as the server's own connections are. The plain mode keeps
  a protocol of its own in front of aiohttp's instead, told by an app signal when a request is
  answered: one more object and call per read, and a signal per answer.
- `answer_posts_directly` replaces the low-level server's `request_handler`, so the app's plain
  POST routes are served past its per-request dispatch, which asks the event loop module for the
  loop (a `getpid` on CPython 3.11).
- `JsonAnswer` stands in for aiohttp's `StreamResponse` for a 200 JSON answer, written in one
  piece with aiohttp's own `Date` cache (`helpers.rfc822_formatted_time`) and `Server` value, on
  the request's `writer`.

These were written against, and tested with, the aiohttp releases in TESTED_AIOHTTP; with any
other, `limitguard serve` logs a warning and serves in the plain mode (limitguard.http.modes).
Moving to a new aiohttp: docs/architecture.md#the-http-modes-and-aiohttp.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import hdrs, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11
from aiohttp.web_protocol import RequestHandler

from limitguard.http.limits import HEADERS_END, BoundedConnection, PeerConnections

# The aiohttp releases this module was tested with (`make test` passes on each): the fast mode is
# used with these only. Add a release here once the suite passes on it (docs/architecture.md).
TESTED_AIOHTTP = ("3.14.5",)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# -- the connection protocol -------------------------------------------------------------------------


class BoundedRequestHandler(BoundedConnection, RequestHandler):
    """aiohttp's connection protocol with a header deadline and a place in `PeerConnections`.

    The deadline runs from the connection's opening (its first request) or a request's first byte
    until the blank line that ends its headers. Whether the connection is between requests is
    aiohttp's own state: its request loop waits on `_waiter` exactly then.
    """

    __slots__ = BoundedConnection.BOUNDED_SLOTS

    def __init__(self, manager: web.Server, connections: PeerConnections, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._bound_by(connections, self._loop.call_later)

    @property
    def waiting(self) -> bool:
        waiter = self._waiter
        return self._in_headers or (waiter is not None and not waiter.done())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self._admitted(transport):
            return
        super().connection_made(transport)
        self._time_headers()

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self._released():
            return  # refused in connection_made
        super().connection_lost(exc)
        self._closed()

    def data_received(self, data: bytes) -> None:
        if not self._in_headers:
            waiter = self._waiter
            if waiter is None or waiter.done():
                super().data_received(data)  # a body: the endpoint's body timeout bounds it
                return
            # the request loop waits for the next request: this is its first byte
            if HEADERS_END in data:  # and the whole head (the usual request): nothing to time
                super().data_received(data)
                return
            self._time_headers()
        self._scan_headers(data)
        super().data_received(data)

    def resume_reading(self, resume_parser: bool = True) -> None:
        """Only when reading was paused: aiohttp's StreamReader asks after every body read (3.14
        streams.py), and the base method then feeds the parser nothing and resumes an unpaused
        transport, both through the TLS layer. The parser pauses only with reading."""
        if self._reading_paused:
            super().resume_reading(resume_parser)

    def close_without_lingering(self) -> None:
        self._lingering_time = 0.0
        self._keepalive = False

    def abort(self) -> None:
        transport = self.transport
        if transport is not None:
            transport.abort()


def connections(
    server: web.Server, app: web.Application, limited: PeerConnections, loop: asyncio.AbstractEventLoop
) -> Callable[[], asyncio.Protocol]:
    """Each accepted connection's protocol for *server*, made with the settings the server's own are
    made with (`_kwargs`: the runner's, limitguard.http.site.limited_runner); *app*'s POST routes
    answered directly."""
    answer_posts_directly(server, app)  # no getpid a request
    kwargs = server._kwargs
    return lambda: BoundedRequestHandler(server, limited, loop=loop, **kwargs)


def connection_of(request: web.BaseRequest) -> BoundedConnection | None:
    """The bounded connection *request* came on (None once it is gone)."""
    protocol = request.protocol
    return protocol if isinstance(protocol, BoundedRequestHandler) else None


# -- POST routes past the application's dispatch -----------------------------------------------------
# aiohttp's application handler (aiohttp 3.14, web_app.py `Application._handle`) starts every request
# with `asyncio.get_event_loop()`, to read the loop's debug flag; on CPython 3.11 that call makes a
# `getpid()` system call, one per request (bench/syscalls.py counts it). The admission and extender
# routes are exact POST paths whose handlers need nothing of that dispatch: no middleware, no
# response-prepare signal, no `request.app` or `match_info`. So the server's request handler answers
# those paths from a table read from the app's own router, and hands every other request (probes,
# metrics, 404, 405, `Expect: 100-continue`) to the application as before. An app with middlewares
# or response-prepare signals is left to aiohttp entirely. tests/unit/http/test_direct.py fails if
# aiohttp stops reading the server's request handler or its dispatch stops asking for the loop.


def direct_posts(app: web.Application) -> dict[str, Handler]:
    """The app's POST routes on plain paths, by path; none when the app has middlewares or signals
    on response preparation (a direct answer would skip them)."""
    if app.middlewares or app.on_response_prepare:
        return {}
    posts: dict[str, Handler] = {}
    for resource in app.router.resources():
        if not isinstance(resource, web.PlainResource):
            continue
        for route in resource:
            if route.method == hdrs.METH_POST:
                posts.setdefault(resource.canonical, route.handler)  # the router takes the first too
    return posts


def answer_posts_directly(server: web.Server, app: web.Application) -> None:
    """Serve *app*'s plain POST routes (`direct_posts`) without its dispatch on *server*, once."""
    fallback = server.request_handler
    posts: Mapping[str, Handler] = direct_posts(app)
    if not posts or getattr(fallback, "direct_posts", None) is not None:
        return

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.method == hdrs.METH_POST and hdrs.EXPECT not in request.headers:
            # the path the router matches: percent-decoded except for "/" and "%"
            handler = posts.get(request.rel_url.path_safe)
            if handler is not None:
                return await handler(request)  # type: ignore[arg-type]  # the app's Request factory
        return await fallback(request)

    handle.direct_posts = posts  # type: ignore[attr-defined]
    server.request_handler = handle


# -- a 200 JSON answer in one piece ------------------------------------------------------------------
# aiohttp's `web.Response` builds a header multidict for every answer, checks cookies, compression,
# chunking and the Connection rules, runs the app's response-prepare hook and serialises the headers
# one by one before it writes. Admission and extender answers always have one shape: 200,
# `application/json`, a length. `JsonAnswer` writes that status line, the headers aiohttp writes for
# it (Content-Type, Content-Length, Date, Server) and the body with one write on the request's own
# writer, and answers aiohttp's request handler as a response does (`prepare`, `write_eof`,
# `keep_alive`). The app has no response-prepare hook in this mode (the direct POSTs rely on that
# too). A request that is not HTTP/1.1 keep-alive gets aiohttp's `web.Response`, whose Connection
# rules cover every version.

_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nDate: %s\r\nServer: "
    + SERVER_SOFTWARE.encode()
    + b"\r\n\r\n"
)


class JsonAnswer:
    """200 with a JSON body for an HTTP/1.1 request that keeps its connection (see `json_answer`)."""

    __slots__ = ("body",)
    status = 200
    keep_alive = True  # made only for requests that keep the connection

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter:
        writer = request.writer
        body = self.body
        await writer.write(_HEAD % (len(body), rfc822_formatted_time().encode()) + body)
        return writer

    async def write_eof(self, data: bytes = b"") -> None:
        """Everything was written by `prepare`."""


def json_answer(request: web.BaseRequest, body: bytes) -> web.StreamResponse:
    """The answer carrying *body*: a `JsonAnswer` where it applies, aiohttp's Response otherwise."""
    if request.version == HttpVersion11 and request.keep_alive:
        return JsonAnswer(body)  # type: ignore[return-value]  # what the request handler uses of one
    return web.Response(body=body, content_type="application/json")
