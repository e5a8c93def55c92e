"""What any client can make the server hold: connections, time before a request, body bytes.

Anyone on the pod network can open a TLS connection and trickle bytes. Each open connection costs
tens of kilobytes (TLS buffers, the protocol's state) and each body in flight up to its route's
limit, so every one of them is bounded here, by time and by count, per peer address and in total:

- **header deadline**: a connection must finish the TLS handshake, and a request's line and headers
  must arrive, within `header_timeout_seconds` of the connection opening (first request) or of the
  request's first byte (later ones). aiohttp has no such option; `BoundedRequestHandler` adds it.
- **idle timeout**: a keep-alive connection with no request is closed after `idle_timeout_seconds`
  (aiohttp's keep-alive timer). It is longer than the clients' own idle timeout (Go's HTTP client,
  which the apiserver and kube-scheduler use, drops idle connections after 90 s), so the client,
  not the server, closes idle connections, and a POST never races a server-side close.
- **connections**: at most `max_connections_per_peer` from one address and `max_connections` in
  all. Past the total, a new connection displaces the oldest connection that is waiting for a
  request (idle or still sending headers), or else one still receiving its request's body, of the
  peer holding the most connections, when that peer holds more than the newcomer's; otherwise the
  newcomer is closed. A connection whose request is being answered is never displaced.
- **body bytes in flight**: `BodyBudget` counts the bytes of bodies being received, per peer and
  in total, with the same rule: past the total, the largest holder yields to a smaller one.

The displacement rule is max-min fairness: a peer that holds no more than its even share of the
total is never displaced, so no number of other clients can lock out the apiserver, whose own
addresses are few and whose requests are small and quick.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from limitguard.errors import StatusError
from limitguard.http import heap
from limitguard.http.direct import answer_posts_directly
from limitguard.http.eventloop import CallLater
from limitguard.http.heap import LARGE_BLOCK_BYTES, release_freed_memory_soon
from limitguard.http.reads import BufferedReads, SharedReadBuffer
from limitguard.http.refusals import Refusals

# Go's net/http.DefaultTransport IdleConnTimeout, which k8s.io/apimachinery's SetTransportDefaults keeps
# for the apiserver's webhook client and kube-scheduler's extender client.
CLIENT_IDLE_TIMEOUT_SECONDS = 90.0
HEADERS_END = b"\r\n\r\n"
# After answering a request whose body it did not read (a 413), aiohttp reads and drops the rest for
# this long before closing, so that the client, still sending, gets the answer rather than a reset.
# Each such connection holds a few hundred KB of TLS and stream buffers meanwhile (aiohttp: 10 s).
LINGER_SECONDS = 2.0

# After this many connections closed, or a body this large returned, freed memory is handed back.
TRIM_EVERY_CLOSED = 512
TRIM_FROM_BODY_BYTES = LARGE_BLOCK_BYTES  # what the heap maps apart: no body size is neither


@dataclass(frozen=True)
class ServingLimits:
    """The bounds of docs/configuration.md (`serve` flags), with the reasons for each default there."""

    header_timeout_seconds: float = 10.0
    idle_timeout_seconds: float = CLIENT_IDLE_TIMEOUT_SECONDS + 30.0
    # One apiserver holds one HTTP/1.1 connection per concurrent webhook call, at most its
    # in-flight limit (--max-requests-inflight 400 + --max-mutating-requests-inflight 200).
    max_connections_per_peer: int = 1024
    # bench/memory.py: ~40 KB of RSS each over TLS; with the bodies in flight below, a crowd of
    # slow clients on every connection adds ~195 MB to the idle server (4,096 added ~245 MB).
    max_connections: int = 2048
    # two extender bodies at their route's cap (32 MiB: a full NodeList, docs/extender.md)
    max_body_bytes_per_peer: int = 64 * 1024 * 1024
    max_body_bytes_in_flight: int = 96 * 1024 * 1024  # bench/memory.py: 1.1-1.7 MB of RSS per MB held


class BodyError(StatusError):
    """A body that cannot be read within the limits: 413 too large, 408 too slow, 503 no room now."""


# -- connections -------------------------------------------------------------------------------------


class PeerConnections:
    """Open connections by peer address, oldest first, and which may be displaced."""

    def __init__(
        self, limits: ServingLimits, call_later: CallLater | None = None, refusals: Refusals | None = None
    ) -> None:
        self.limits = limits
        self.call_later = call_later  # the header deadlines' timer (tests drive it); None: the loop's
        self.by_peer: dict[str, dict[BoundedRequestHandler, None]] = {}
        self.total = 0
        self.refusals = refusals or Refusals()
        self._closed_since_trim = 0

    def admit(self, handler: BoundedRequestHandler, peer: str) -> bool:
        """Count *handler* in, displacing another when full; False: close it instead."""
        held = self.by_peer.get(peer)
        count = len(held) if held else 0
        if count >= self.limits.max_connections_per_peer:
            self.refusals.connections_refused["peer-share"] += 1
            self._count_closed()
            return False
        if self.total >= self.limits.max_connections and not self._displace_for(peer, count):
            self.refusals.connections_refused["total"] += 1
            self._count_closed()
            return False
        if held is None:
            held = self.by_peer[peer] = {}
        held[handler] = None
        self.total += 1
        return True

    def _displace_for(self, peer: str, count: int) -> bool:
        """Close the oldest waiting connection of the peer holding the most, when it holds more; one
        receiving a body when it has none waiting (else a crowd streaming slow bodies locks others out)."""
        ranked = sorted(self.by_peer.items(), key=lambda item: len(item[1]), reverse=True)
        for other, handlers in ranked:
            if len(handlers) <= count + 1:
                return False
            if other == peer:
                continue
            victim = next((handler for handler in handlers if handler.waiting), None)
            if victim is None:
                victim = next((handler for handler in handlers if handler.receiving_body), None)
            if victim is not None:
                self.refusals.connections_displaced += 1
                self.release(victim, other)  # now: its connection_lost comes a loop turn later
                victim.abort()
                return True
        return False

    def release(self, handler: BoundedRequestHandler, peer: str) -> None:
        held = self.by_peer.get(peer)
        if held is None or held.pop(handler, 0) is not None:
            return
        self.total -= 1
        if not held:
            del self.by_peer[peer]
        self._count_closed()

    def _count_closed(self) -> None:
        """A refused connection counts too: its TLS handshake was done, its TLS state allocated in the
        heap (measured when its 256 KiB ciphertext buffer came from the heap too, which it no longer
        does: without trims, 5,000 slow-header sockets held 3-4 KB more each)."""
        self._closed_since_trim += 1
        if self._closed_since_trim >= TRIM_EVERY_CLOSED or (self.total == 0 and self._closed_since_trim > 64):
            self._closed_since_trim = 0
            release_freed_memory_soon()  # after the connection's own objects are freed


class BoundedRequestHandler(RequestHandler):
    """aiohttp's connection protocol with a header deadline and a place in `PeerConnections`.

    The deadline runs from the connection's opening (its first request) or a request's first byte
    until the blank line that ends its headers. Whether the connection is between requests is
    aiohttp's own state: its request loop waits on `_waiter` exactly then (aiohttp is pinned in
    constraints.txt; tests/unit/http/test_limits.py fails if that changes).
    """

    __slots__ = (
        "_call_later",
        "_connections",
        "_deadline",
        "_header_timeout",
        "_in_headers",
        "_peer",
        "_tail",
        "_trim_when_closed",
        "receiving_body",
    )

    def __init__(self, manager: web.Server, connections: PeerConnections, **kwargs: Any) -> None:
        limits = connections.limits
        super().__init__(manager, keepalive_timeout=limits.idle_timeout_seconds, **kwargs)
        self._connections = connections
        self._peer: str | None = None
        self._header_timeout = limits.header_timeout_seconds
        self._call_later = connections.call_later or self._loop.call_later
        self._deadline: asyncio.TimerHandle | None = None
        self._in_headers = True  # a new connection is before its first request's headers
        self._tail = b""
        self.receiving_body = False  # set by the endpoint while it reads a request's body
        self._trim_when_closed = False

    @property
    def waiting(self) -> bool:
        """Between requests: idle, or receiving a request's line and headers."""
        waiter = self._waiter
        return self._in_headers or (waiter is not None and not waiter.done())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peername = transport.get_extra_info("peername")
        peer = str(peername[0]) if isinstance(peername, (tuple, list)) else str(peername)
        if not self._connections.admit(self, peer):
            transport.abort()  # before aiohttp knows it: nothing to undo
            return
        self._peer = peer
        super().connection_made(transport)
        self._deadline = self._call_later(self._header_timeout, self._header_deadline)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._peer is None:
            return  # refused in connection_made
        self._connections.release(self, self._peer)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().connection_lost(exc)
        if self._trim_when_closed:
            release_freed_memory_soon()  # after what the connection held is freed

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
            self._in_headers = True
            self._deadline = self._call_later(self._header_timeout, self._header_deadline)
        seen = self._tail + data
        if HEADERS_END in seen:
            self._in_headers = False
            self._tail = b""
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
        else:
            self._tail = seen[-3:]
        super().data_received(data)

    def resume_reading(self, resume_parser: bool = True) -> None:
        """Only when reading was paused: aiohttp's StreamReader asks after every body read (3.14
        streams.py), and the base method then feeds the parser nothing and resumes an unpaused
        transport, both through the TLS layer. The parser pauses only with reading."""
        if self._reading_paused:
            super().resume_reading(resume_parser)

    def close_without_lingering(self) -> None:
        """After this answer, close at once: nobody waits for it (a stalled or refused body)."""
        self._lingering_time = 0.0
        self._keepalive = False

    def trim_when_closed(self) -> None:
        """Hand freed memory back once this connection is closed: it was refused a large body, and
        what had arrived of it (TLS records, aiohttp's buffered chunks) lies in the heap between
        live objects until then: without this, an attack of stalled large bodies, most of them refused
        at once, kept the server near its peak until the rest timed out (docs/benchmarks.md)."""
        self._trim_when_closed = True

    def _header_deadline(self) -> None:
        self._deadline = None
        if self._in_headers:
            self._connections.refusals.connections_timed_out += 1
            self.abort()

    def abort(self) -> None:
        """Drop the connection now: a TLS close would wait on a peer that may not read."""
        transport = self.transport
        if transport is not None:
            transport.abort()


class LimitedSite(web.BaseSite):
    """aiohttp's TCPSite with `BoundedRequestHandler` connections and a TLS handshake deadline."""

    __slots__ = ("_host", "_kwargs", "_port", "connections")

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        *,
        limits: ServingLimits,
        ssl_context: Any = None,
        backlog: int = 128,
        call_later: CallLater | None = None,
        refusals: Refusals | None = None,
        **handler_kwargs: Any,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._host, self._port = host, port
        self.connections = PeerConnections(limits, call_later, refusals)
        self._kwargs = handler_kwargs

    @property
    def name(self) -> str:
        return f"https://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None  # BaseSite checked: the runner is set up
        connections = self.connections
        kwargs = {"access_log": None, "lingering_time": LINGER_SECONDS, **self._kwargs}
        heap.keep_large_blocks_apart()
        if isinstance(self._runner, web.AppRunner):
            answer_posts_directly(server, self._runner.app)  # no getpid a request (limitguard.http.direct)

        reads = SharedReadBuffer()
        accepted = heap.map_io_blocks if self._ssl_context else heap.keep_large_blocks_apart

        def protocol() -> BufferedReads:
            accepted()  # the TLS layer's own buffer, allocated next, is mapped apart
            return BufferedReads(BoundedRequestHandler(server, connections, loop=loop, **kwargs), reads)

        tls = (
            {
                "ssl_handshake_timeout": connections.limits.header_timeout_seconds,
                "ssl_shutdown_timeout": connections.limits.header_timeout_seconds,
            }
            if self._ssl_context
            else {}
        )
        self._server = await loop.create_server(
            protocol,
            self._host,
            self._port,
            ssl=self._ssl_context,
            backlog=self._backlog,
            reuse_address=True,
            **tls,
        )


# -- body bytes --------------------------------------------------------------------------------------


class Reservation:
    """Body bytes one request holds; `evicted` is set when a smaller holder needed the room."""

    __slots__ = ("_on_evict", "evicted", "peer", "size")

    def __init__(self, peer: str, on_evict: Callable[[], None]) -> None:
        self.peer = peer
        self.size = 0
        self.evicted = False
        self._on_evict = on_evict

    def evict(self) -> None:
        self.evicted = True
        self._on_evict()


class BodyBudget:
    """Bytes of request bodies being received, per peer and in total (ServingLimits)."""

    def __init__(self, limits: ServingLimits, refusals: Refusals | None = None) -> None:
        self.per_peer_limit = limits.max_body_bytes_per_peer
        self.limit = limits.max_body_bytes_in_flight
        self.by_peer: dict[str, dict[Reservation, None]] = {}
        self.held_by_peer: dict[str, int] = {}
        self.total = 0
        self.refusals = refusals or Refusals()

    def open(self, peer: str, on_evict: Callable[[], None]) -> Reservation:
        reservation = Reservation(peer, on_evict)
        self.by_peer.setdefault(peer, {})[reservation] = None
        self.held_by_peer.setdefault(peer, 0)
        return reservation

    def grow(self, reservation: Reservation, size: int) -> None:
        """Hold *size* bytes in all for *reservation*, or BodyError (503) and hold no more."""
        extra = size - reservation.size
        if extra <= 0 or reservation.evicted:
            return
        peer = reservation.peer
        held = self.held_by_peer[peer]
        if held + extra > self.per_peer_limit:
            self.refusals.bodies_refused["peer-share"] += 1
            raise BodyError(
                503, f"too many body bytes in flight from {peer} (limit {self.per_peer_limit}); retry later"
            )
        while self.total + extra > self.limit:
            if not self._evict_for(peer, held + extra):
                self.refusals.bodies_refused["total"] += 1
                raise BodyError(503, "too many body bytes in flight; retry later")
        reservation.size = size
        self.held_by_peer[peer] = held + extra
        self.total += extra

    def _evict_for(self, peer: str, wanted: int) -> bool:
        """Evict the largest body of the peer holding the most bytes, when it holds more than *wanted*."""
        other = max(self.held_by_peer, key=self.held_by_peer.__getitem__)
        if other == peer or self.held_by_peer[other] <= wanted:
            return False
        victim = max(self.by_peer[other], key=lambda reservation: reservation.size)
        self.close(victim)
        self.refusals.bodies_displaced += 1
        victim.evict()
        return True

    def close(self, reservation: Reservation) -> None:
        """Return what *reservation* holds (once; again is a no-op)."""
        held = self.by_peer.get(reservation.peer)
        if held is None or held.pop(reservation, 0) is not None:
            return
        self.total -= reservation.size
        remaining = self.held_by_peer[reservation.peer] - reservation.size
        if reservation.size >= TRIM_FROM_BODY_BYTES:
            release_freed_memory_soon()  # once the reader's buffer is gone
        reservation.size = 0
        if held:
            self.held_by_peer[reservation.peer] = remaining
        else:
            del self.by_peer[reservation.peer], self.held_by_peer[reservation.peer]
