"""How the server meets aiohttp: the fast mode or the plain one, chosen once at start-up.

Both serve the same routes with the same answers, limits and refusals; they differ in how they reach
them. The fast mode (limitguard.http.fast) reaches into aiohttp's internals where that was measured
to pay (docs/benchmarks.md); the plain mode (limitguard.http.plain) uses aiohttp's public API only.
An `HttpMode` is the few functions in which they differ; the app carries its mode (`use_http_mode`),
the endpoints bind its functions when they are built and the listener (limitguard.http.site) reads
it as it starts, so no request asks which mode it is in.

`choose_http_mode` is the start-up check: the fast mode only with an aiohttp release it was tested
with (TESTED_AIOHTTP in limitguard.http.fast), else the plain mode and a warning in the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from limitguard.http import fast, plain
from limitguard.http.limits import BoundedConnection, PeerConnections

log = logging.getLogger(__name__)

ConnectionFactory = Callable[
    [web.Server, web.Application, PeerConnections, asyncio.AbstractEventLoop], Callable[[], asyncio.Protocol]
]


def _as_it_is(app: web.Application) -> None:
    """The fast mode adds nothing to the app: its direct POSTs need an app with no prepare signal."""


@dataclass(frozen=True)
class HttpMode:
    """What differs between the modes: each is a function bound once, never a branch per request."""

    name: str
    connections: ConnectionFactory  # each accepted connection's protocol, for the listener
    json_answer: Callable[[web.BaseRequest, bytes], web.StreamResponse]  # a route's 200 JSON answer
    connection_of: Callable[[web.BaseRequest], BoundedConnection | None]  # the request's connection
    prepare_app: Callable[[web.Application], None]  # what the mode needs of the app, before it is frozen


FAST = HttpMode("fast", fast.connections, fast.json_answer, fast.connection_of, _as_it_is)
PLAIN = HttpMode("plain", plain.connections, plain.json_answer, plain.connection_of, plain.prepare_app)
HTTP_MODES = {mode.name: mode for mode in (FAST, PLAIN)}

HTTP_MODE = web.AppKey("http_mode", HttpMode)


def use_http_mode(app: web.Application, mode: HttpMode) -> None:
    """Serve *app* in *mode*: before any endpoint is added to it."""
    app[HTTP_MODE] = mode
    mode.prepare_app(app)


def http_mode_of(app: web.Application) -> HttpMode:
    """The mode *app* is served in; an app nobody gave one is a bug (LookupError)."""
    return app[HTTP_MODE]


def choose_http_mode(requested: str, version: str = aiohttp.__version__) -> HttpMode:
    """The mode `limitguard serve` runs in for *requested* (a name of HTTP_MODES): the fast mode
    falls back to the plain one, with a warning, on an aiohttp it was not tested with."""
    mode = HTTP_MODES[requested]
    if mode is FAST and version not in fast.TESTED_AIOHTTP:
        log.warning(
            f"aiohttp {version} is not a release the fast HTTP mode was tested with; serving in the "
            "plain mode (the same answers and limits, more CPU a request)",
            extra={"aiohttp": version, "tested": list(fast.TESTED_AIOHTTP), "httpMode": PLAIN.name},
        )
        return PLAIN
    log.info(f"HTTP mode: {mode.name}", extra={"httpMode": mode.name, "aiohttp": version})
    return mode
