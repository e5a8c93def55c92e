"""One transport for every POST route: bounded body, decode, answer, fail open, observe, encode.

Admission and extender endpoints differ only in their protocol (an `Endpoint`'s functions); the
transport rules are the same for all of them and live here once:
- a body over its limit is 413, slower than the body timeout 408, undecodable 400 - each a JSON error;
- a body being received counts in the server's `BodyBudget` (limitguard.http.bodies): 503 when its
  peer, or the server, holds too many bytes in flight already;
- a bug in the answering code never becomes a 500 that could block the cluster: it is logged and
  answered by the endpoint's fail-open answer;
- every answer is timed and handed to the endpoint's observer (metrics, logs).

What differs between the HTTP modes (limitguard.http.modes) - how a 200 is written, how the request's
connection is found - is bound into each route's handler when it is built, from the app's mode.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from inspect import iscoroutine
from typing import Any, Generic, TypeVar

import orjson
from aiohttp import web

from limitguard.errors import LimitguardError, StatusError
from limitguard.http.bodies import TRIM_FROM_BODY_BYTES, BodyBudget, BodyError, Reservation
from limitguard.http.eventloop import running_loop
from limitguard.http.heap import release_freed_memory_soon
from limitguard.http.limits import BoundedConnection
from limitguard.http.modes import HttpMode, http_mode_of
from limitguard.state.ledger import CALLER

log = logging.getLogger(__name__)

Request = TypeVar("Request")
Answer = TypeVar("Answer")


@dataclass(frozen=True)
class Endpoint(Generic[Request, Answer]):
    """A POST route's protocol: pure functions over bytes and decoded requests."""

    name: str  # metrics label and log field: validate, mutate, extender-filter, ...
    decode: Callable[[bytes], Request]  # raises a LimitguardError subclass -> 400 with its text
    answer: Callable[
        [Request], Answer | Coroutine[Any, Any, Answer]
    ]  # a coroutine: a follower asking its leader
    fail_open: Callable[[Request], Answer]  # the answer when `answer` raised
    encode: Callable[[Request, Answer], bytes]
    observe: Callable[[Request, Answer, float], None]  # metrics and logs, given seconds taken
    rejected: Callable[[int], None]  # counts an HTTP error answer, given its status
    max_body_bytes: int
    json_only: bool = False  # require Content-Type application/json (the apiserver always sends it)


Handler = Callable[[web.Request], Awaitable[web.Response]]
ConnectionOf = Callable[[web.BaseRequest], BoundedConnection | None]


def json_error(status: int, message: str) -> web.Response:
    return web.Response(
        status=status,
        body=orjson.dumps({"error": message, "status": status}),
        content_type="application/json",
    )


def _unrouted(status: int, message: str, request: web.Request) -> web.Response:
    """A JSON error for a request no route takes; a body it carried is left unread, so the connection
    closes after the answer."""
    response = json_error(status, message)
    if request.can_read_body:
        response.force_close()
    return response


def _method_not_allowed(allowed: list[str]) -> Handler:
    allow = ", ".join(allowed)

    async def method_not_allowed(request: web.Request) -> web.Response:
        response = _unrouted(405, f"method {request.method} not allowed: use {allow}", request)
        response.headers["Allow"] = allow
        return response

    return method_not_allowed


async def _not_found(request: web.Request) -> web.Response:
    return _unrouted(404, f"no route for {request.path}", request)


def answer_unrouted_in_json(app: web.Application) -> None:
    """Unknown paths (404) and other methods (405, with Allow) answered as JSON errors, for every route.

    Routes, not an aiohttp middleware: a request that matches a route pays nothing for this. Each
    resource gets a last any-method route answering 405, and one catch-all resource answers 404;
    call it once every other route is added.
    """
    for resource in list(app.router.resources()):
        allowed = sorted({route.method for route in resource})
        resource.add_route("*", _method_not_allowed(allowed))  # type: ignore[attr-defined]
    app.router.add_route("*", "/{path:.*}", _not_found)


def _too_large(length: int, limit: int) -> BodyError:
    return BodyError(413, f"body of {length} bytes exceeds the limit of {limit} bytes")


async def _read(
    request: web.Request, limit: int, budget: BodyBudget | None, held: Reservation | None
) -> bytes:
    """The body, counted in *budget* as it arrives: its declared length up front, chunked ones as they grow.

    One buffer grows in place (no list of chunks and a join: one copy of the body, not two)."""
    length = request.content_length
    if budget is not None and held is not None and length is not None:
        budget.grow(held, length)
    body = bytearray()
    async for chunk in request.content.iter_chunked(1 << 16):  # also bounds chunked bodies
        size = len(body) + len(chunk)
        if size > limit:
            raise BodyError(413, f"body exceeds the limit of {limit} bytes")
        if budget is not None and held is not None and (length is None or size > length):
            budget.grow(held, size)
        body += chunk
    return body  # orjson and every decoder read a bytearray as they read bytes


async def read_body(
    request: web.Request,
    limit: int,
    timeout: float,
    budget: BodyBudget | None = None,
    connection_of: ConnectionOf | None = None,
) -> bytes:
    """The whole body, or BodyError: 413 past *limit* bytes, 408 when slower than *timeout* seconds,
    503 when *budget* has no room for it (or gave its room to a smaller holder meanwhile). While it
    waits for the body, the request's connection (*connection_of* it, the HTTP mode's) may be
    displaced by a newcomer; a body already received in full never looks its connection up."""
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(request.content_length, limit)
    if request.content.is_eof():
        # Already received in full (the usual case for an admission review): nothing to wait for,
        # so no timer, no task and no chunk iterator; the bytes are held already, by aiohttp.
        body = request.content.read_nowait()
        if len(body) > limit:
            raise BodyError(413, f"body exceeds the limit of {limit} bytes")
        return body
    loop = running_loop()
    evicted: asyncio.Future[None] = loop.create_future()
    held = None
    if budget is not None:
        held = budget.open(request.remote or "", lambda: evicted.done() or evicted.set_result(None))
    reader = loop.create_task(_read(request, limit, budget, held))
    connection = connection_of(request) if connection_of is not None else None
    if connection is not None:
        connection.receiving_body = True  # displaceable meanwhile: no decision has started
    try:
        done, _ = await asyncio.wait((reader, evicted), timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if reader in done:
            return reader.result()
        if evicted.done():
            raise BodyError(503, "body dropped to make room for other clients' requests; retry later")
        raise BodyError(408, f"body not received within {timeout:g}s")
    finally:
        if connection is not None:
            connection.receiving_body = False
        if not reader.done():
            reader.cancel()  # its buffer goes with it
        if budget is not None and held is not None:
            budget.close(held)


def _refused(
    endpoint: Endpoint[Any, Any],
    status: int,
    message: str,
    request: web.Request | None = None,
    connection: BoundedConnection | None = None,
) -> web.Response:
    """The JSON error; with *request*, a body was left unread: the connection closes after it, at once
    unless the client is still sending what was too large (413), which it may then read."""
    endpoint.rejected(status)
    response = json_error(status, message)
    if request is not None:
        response.force_close()
        if connection is not None:
            if status != 413:
                connection.close_without_lingering()
            if (request.content_length or 0) >= TRIM_FROM_BODY_BYTES:
                connection.trim_when_closed()
    return response


def endpoint_handler(
    endpoint: Endpoint[Any, Any], body_timeout: float, mode: HttpMode, budget: BodyBudget | None = None
) -> Handler:
    """The aiohttp handler of one Endpoint in *mode*: the one transport every POST route shares.

    A plain route handler, not an aiohttp middleware: a middleware runs its wrapper chain (and
    aiohttp's current-app bookkeeping) on every request, which costs as much as a binding's policy
    check. The rules are still written once, here.
    """
    decode, answer_of, observe, encode = endpoint.decode, endpoint.answer, endpoint.observe, endpoint.encode
    limit = endpoint.max_body_bytes
    json_answer, connection_of = mode.json_answer, mode.connection_of

    async def serve(request: web.Request) -> web.Response:
        started = time.perf_counter()
        try:
            # The body first, whatever comes next: the connection serves its next request only if
            # this one's body was read (the server does not linger over unread bodies).
            body = await read_body(request, limit, body_timeout, budget, connection_of)
        except BodyError as error:
            return _refused(endpoint, error.status, error.message, request, connection_of(request))
        # The apiserver sends exactly "application/json": compare the raw header first, since
        # aiohttp parses the header (a few microseconds) on each request's first `content_type`.
        if (
            endpoint.json_only
            and request.headers.get("Content-Type") != "application/json"
            and request.content_type != "application/json"
        ):
            return _refused(
                endpoint, 400, f"expected Content-Type application/json, got {request.content_type!r}"
            )
        try:
            decoded = decode(body)
        except StatusError as error:
            return _refused(endpoint, error.status, error.message)
        except LimitguardError as error:
            return _refused(endpoint, 400, str(error))
        CALLER.set(request.remote or "")  # named if a ledger entry it makes is found never written
        try:
            answer = answer_of(decoded)
            if iscoroutine(answer):  # a follower asking its leader; not isawaitable: an ABC check per call
                answer = await answer
        except StatusError as error:  # refused, not decided: no fail-open answer either
            return _refused(endpoint, error.status, error.message)
        except Exception:
            log.exception("%s failed; answering fail-open", endpoint.name)
            answer = endpoint.fail_open(decoded)
        observe(decoded, answer, time.perf_counter() - started)
        if len(body) >= TRIM_FROM_BODY_BYTES:  # a full NodeList: its parse freed many pages
            release_freed_memory_soon()  # one trim, also when the body budget asked for one
        return json_answer(request, encode(decoded, answer))

    return serve


def add_endpoint(
    app: web.Application,
    path: str,
    endpoint: Endpoint[Any, Any],
    body_timeout: float,
    budget: BodyBudget | None = None,
) -> None:
    """Serve *endpoint* on POST *path*, in the app's HTTP mode (limitguard.http.modes.use_http_mode)."""
    app.router.add_post(path, endpoint_handler(endpoint, body_timeout, http_mode_of(app), budget))
