"""Body bytes in flight: what the request bodies being received hold, per peer address and in all.

Each body in flight holds up to its route's limit, and anyone on the pod network can start many and
send them slowly. `BodyBudget` counts the bytes of the bodies being received (limitguard.http.endpoint
reads them), per peer and in total (`ServingLimits.max_body_bytes_per_peer` and
`max_body_bytes_in_flight`), with the connections' rule (limitguard.http.limits): past the total,
the largest holder yields to a smaller one (503), so no number of other clients can lock out the
apiserver, whose requests are small and quick.
"""

from __future__ import annotations

from collections.abc import Callable

from limitguard.errors import StatusError
from limitguard.http.heap import LARGE_BLOCK_BYTES, release_freed_memory_soon
from limitguard.http.limits import ServingLimits
from limitguard.http.refusals import Refusals

# A body this large returned hands freed memory back (what the heap maps apart: no body size is neither).
TRIM_FROM_BODY_BYTES = LARGE_BLOCK_BYTES


class BodyError(StatusError):
    """A body that cannot be read within the limits: 413 too large, 408 too slow, 503 no room now."""


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
