"""What any client can make the server hold: connections, time before a request, body bytes.

Anyone on the pod network can open a TLS connection and trickle bytes. Each open connection costs
tens of kilobytes (TLS buffers, the protocol's state) and each body in flight up to its route's
limit, so every one of them is bounded here, by time and by count, per peer address and in total:

- **header deadline**: a connection must finish the TLS handshake, and a request's line and headers
  must arrive, within `header_timeout_seconds` of the connection opening (first request) or of the
  request's first byte (later ones). aiohttp has no such option; `BoundedConnection` adds it to
  the connection protocol of either HTTP mode (limitguard.http.modes).
- **idle timeout**: a keep-alive connection with no request is closed after `idle_timeout_seconds`
  (aiohttp's keep-alive timer). It is longer than the clients' own idle timeout (Go's HTTP client,
  which the apiserver and kube-scheduler use, drops idle connections after 90 s), so the client,
  not the server, closes idle connections, and a POST never races a server-side close.
- **connections**: at most `max_connections_per_peer` from one address and `max_connections` in
  all. Past the total, a new connection displaces the oldest connection that is waiting for a
  request (idle or still sending headers), or else one still receiving its request's body, of the
  peer holding the most connections, when that peer holds more than the newcomer's; otherwise the
  newcomer is closed. A connection whose request is being answered is never displaced.
- **body bytes in flight**: `BodyBudget` (limitguard.http.bodies) counts the bytes of bodies being
  received, per peer and in total, with the same rule: past the total, the largest holder yields
  to a smaller one.

The displacement rule is max-min fairness: a peer that holds no more than its even share of the
total is never displaced, so no number of other clients can lock out the apiserver, whose own
addresses are few and whose requests are small and quick.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from limitguard.http.eventloop import CallLater
from limitguard.http.heap import release_freed_memory_soon
from limitguard.http.refusals import Refusals

# Go's net/http.DefaultTransport IdleConnTimeout, which k8s.io/apimachinery's SetTransportDefaults keeps
# for the apiserver's webhook client and kube-scheduler's extender client.
CLIENT_IDLE_TIMEOUT_SECONDS = 90.0
HEADERS_END = b"\r\n\r\n"
# After answering a request whose body it did not read (a 413), aiohttp reads and drops the rest for
# this long before closing, so that the client, still sending, gets the answer rather than a reset.
# Each such connection holds a few hundred KB of TLS and stream buffers meanwhile (aiohttp: 10 s).
LINGER_SECONDS = 2.0

# After this many connections closed, freed memory is handed back.
TRIM_EVERY_CLOSED = 512


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


# -- connections -------------------------------------------------------------------------------------


class PeerConnections:
    """Open connections by peer address, oldest first, and which may be displaced."""

    def __init__(
        self, limits: ServingLimits, call_later: CallLater | None = None, refusals: Refusals | None = None
    ) -> None:
        self.limits = limits
        self.call_later = call_later  # the header deadlines' timer (tests drive it); None: the loop's
        self.by_peer: dict[str, dict[BoundedConnection, None]] = {}
        self.total = 0
        self.refusals = refusals or Refusals()
        self._closed_since_trim = 0

    def admit(self, handler: BoundedConnection, peer: str) -> bool:
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

    def release(self, handler: BoundedConnection, peer: str) -> None:
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


class BoundedConnection:
    """A connection as the limits see it, whichever HTTP mode serves it (limitguard.http.modes).

    Each mode's connection protocol inherits this: its place in `PeerConnections` and the header
    deadline, kept in the attributes named by BOUNDED_SLOTS, which each subclass declares in its
    own `__slots__` (aiohttp's request handler, which the fast mode's extends, has slots of its own,
    so this class can hold none). The mode supplies what depends on aiohttp: whether the
    connection is between requests (`waiting`), how to drop it (`abort`) and how to close it at
    once after an answer (`close_without_lingering`).
    """

    __slots__ = ()
    BOUNDED_SLOTS = (
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
    _call_later: CallLater
    _connections: PeerConnections
    _deadline: asyncio.TimerHandle | None
    _header_timeout: float
    _in_headers: bool  # receiving a request's line and headers (a new connection is, before its first)
    _peer: str | None  # None until admitted
    _tail: bytes  # the last bytes of the head so far: its blank line may straddle two reads
    _trim_when_closed: bool
    receiving_body: bool  # set by the endpoint while it reads a request's body (displaceable then)

    def _bound_by(self, connections: PeerConnections, call_later: CallLater) -> None:
        """Start as a new connection: before its first request's headers, not yet admitted."""
        self._connections = connections
        self._peer = None
        self._header_timeout = connections.limits.header_timeout_seconds
        self._call_later = connections.call_later or call_later
        self._deadline = None
        self._in_headers = True
        self._tail = b""
        self.receiving_body = False
        self._trim_when_closed = False

    @property
    def waiting(self) -> bool:
        """Between requests: idle, or receiving a request's line and headers."""
        raise NotImplementedError

    def abort(self) -> None:
        """Drop the connection now: a TLS close would wait on a peer that may not read."""
        raise NotImplementedError

    def close_without_lingering(self) -> None:
        """After this answer, close at once: nobody waits for it (a stalled or refused body)."""
        raise NotImplementedError

    def trim_when_closed(self) -> None:
        """Hand freed memory back once this connection is closed: it was refused a large body, and
        what had arrived of it (TLS records, aiohttp's buffered chunks) lies in the heap between
        live objects until then: without this, an attack of stalled large bodies, most of them refused
        at once, kept the server near its peak until the rest timed out (docs/benchmarks.md)."""
        self._trim_when_closed = True

    def _admitted(self, transport: asyncio.BaseTransport) -> bool:
        """Count the new connection in `PeerConnections`, or drop it (False) and go no further."""
        peername = transport.get_extra_info("peername")
        peer = str(peername[0]) if isinstance(peername, (tuple, list)) else str(peername)
        if not self._connections.admit(self, peer):
            transport.abort()  # before aiohttp knows it: nothing to undo
            return False
        self._peer = peer
        return True

    def _released(self) -> bool:
        """Give the connection's place back as it closes; False: it was never admitted."""
        if self._peer is None:
            return False
        self._connections.release(self, self._peer)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        return True

    def _time_headers(self) -> None:
        """A head begins (the connection's first, or a later request's first byte): time it."""
        self._in_headers = True
        self._deadline = self._call_later(self._header_timeout, self._header_deadline)

    def _scan_headers(self, data: bytes) -> None:
        """Note whether *data* ends the head being received, and stop its deadline if so."""
        seen = self._tail + data
        if HEADERS_END in seen:
            self._in_headers = False
            self._tail = b""
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
        else:
            self._tail = seen[-3:]

    def _closed(self) -> None:
        """After the mode's own connection_lost: hand back what a refused large body left."""
        if self._trim_when_closed:
            release_freed_memory_soon()  # after what the connection held is freed

    def _header_deadline(self) -> None:
        self._deadline = None
        if self._in_headers:
            self._connections.refusals.connections_timed_out += 1
            self.abort()
