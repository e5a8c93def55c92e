"""Every write limitguard makes to the cluster goes through one queue: labels, taints, reports, events.

A Node write reaches every Node watcher in the cluster (kube-proxy, CNI agents, every scheduler), and
a report write every report reader, so limitguard writes an object only when what it has to say of it
changed, and never faster than one global rate (`clusterWrites.maxPerSecond`):

- coalesced per object: a write queued for an object is replaced by a newer one for the same object
  and keeps its place in line, so a node whose room changes ten times while its write waits is
  written once, with the newest value, and a busy node does not starve the others;
- urgent first: a write that makes an object say *less* room than before (a lowered label, a taint
  added) goes before the others, since the stale, higher value is what causes denied bindings; a
  write submitted `first` (a node's first labels: until then no hint matches it) goes before those;
- one token bucket for every kind of write, as client-go's `flowcontrol.NewTokenBucketRateLimiter(qps,
  burst)` throttles a client: a write takes a token just before its request, so a write that finds
  nothing to change costs nothing.

The queue knows nothing of what it writes. A write is an async callable that reads the desired state
when its turn comes (so it writes the newest), awaits `permit()` right before each request that
changes the cluster, and returns what happened. Conflicts and failures are retried after a delay
unless a newer write for the object was queued meanwhile. Only the leader runs the queue; `clear()`
drops what is queued when leadership is lost, and the next leader starts from what it observes.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

from limitguard.clock import Clock

log = logging.getLogger(__name__)

# client-go's rest.Config defaults a client to QPS 5, burst 10 (k8s.io/client-go/rest DefaultQPS,
# DefaultBurst): what a controller that does not ask for more is allowed against any apiserver.
DEFAULT_MAX_PER_SECOND = 5.0
DEFAULT_BURST = 10
DEFAULT_RETRY_SECONDS = 5.0


class Outcome(enum.StrEnum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"  # the cluster already says it: no request made
    GONE = "gone"  # the object no longer exists (404): nothing to do
    CONFLICT = "conflict"  # 409 on a resourceVersion precondition: read again and retry
    FAILED = "failed"  # any other error: retried
    REJECTED = "rejected"  # the apiserver refused the object itself (400, 403, 422): not retried as is


RETRIED = frozenset({Outcome.CONFLICT, Outcome.FAILED})

Permit = Callable[[], Awaitable[None]]
Perform = Callable[[Permit], Awaitable[Outcome]]
WriteKey = tuple[str, Hashable]  # (kind of write, the object it writes)


@dataclass
class _Queued:
    perform: Perform
    urgent: bool


class TokenBucket:
    """`rate` tokens a second up to `burst`, on the injected clock; `take` sleeps until one is free."""

    def __init__(self, clock: Clock, rate: float, burst: int) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs a positive rate and a burst of at least 1")
        self._clock = clock
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at = clock.now()

    def _refill(self) -> None:
        now = self._clock.now()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now

    async def take(self) -> bool:
        """Take a token; True when the caller had to wait for it (the write was deferred)."""
        waited = False
        while True:
            self._refill()
            # A refill by exactly the time slept can land a rounding error short of a whole token
            # (0.2 s x 5/s): counted as one, or a clock that jumps to each deadline would never get there.
            if self._tokens >= 1.0 - 1e-9:
                self._tokens = max(self._tokens - 1.0, 0.0)
                return waited
            waited = True
            await self._clock.sleep((1.0 - self._tokens) / self.rate)


class ClusterWrites:
    """The one queue of cluster writes (see the module docstring)."""

    def __init__(
        self,
        clock: Clock,
        max_per_second: float = DEFAULT_MAX_PER_SECOND,
        burst: int = DEFAULT_BURST,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ) -> None:
        self._clock = clock
        self._bucket = TokenBucket(clock, max_per_second, burst)
        self._retry_seconds = retry_seconds
        self._urgent: OrderedDict[WriteKey, _Queued] = OrderedDict()
        self._normal: OrderedDict[WriteKey, _Queued] = OrderedDict()
        self._wake = asyncio.Event()
        self._retries: set[asyncio.Task[None]] = set()
        # The newest write submitted per object, until it ends: a retry is dropped once a newer
        # write of its object was submitted after it.
        self._newest: dict[WriteKey, _Queued] = {}
        # Plain numbers, turned into metric families at scrape time.
        self.outcomes: Counter[tuple[str, Outcome]] = Counter()
        self.deferred: Counter[str] = Counter()  # requests that waited for the rate limit, by kind

    def submit(
        self, kind: str, key: Hashable, perform: Perform, *, urgent: bool = False, first: bool = False
    ) -> None:
        """Queue a write of one object, replacing any write of it still queued (keeping its place;
        an urgent write moves a normal one to the urgent line; *first*: to the head of the urgent
        line)."""
        write_key = (kind, key)
        queued = self._urgent.get(write_key) or self._normal.get(write_key)
        urgent = urgent or first or (queued is not None and queued.urgent)
        if urgent and write_key in self._normal:
            del self._normal[write_key]
        fresh = _Queued(perform, urgent)
        (self._urgent if urgent else self._normal)[write_key] = fresh
        if first:
            self._urgent.move_to_end(write_key, last=False)
        self._newest[write_key] = fresh
        self._wake.set()

    def cancel(self, kind: str, key: Hashable) -> None:
        """Forget a queued write (the object is gone, or no longer limitguard's to write)."""
        self._urgent.pop((kind, key), None)
        self._normal.pop((kind, key), None)
        self._newest.pop((kind, key), None)

    def clear(self) -> None:
        """Drop everything queued and every pending retry (leadership lost)."""
        self._urgent.clear()
        self._normal.clear()
        self._newest.clear()
        for task in self._retries:
            task.cancel()
        self._retries.clear()

    def queued(self, kind: str | None = None) -> int:
        keys = [*self._urgent, *self._normal]
        return len(keys) if kind is None else sum(1 for queued_kind, _ in keys if queued_kind == kind)

    def _next(self) -> tuple[WriteKey, _Queued] | None:
        for line in (self._urgent, self._normal):
            if line:
                return line.popitem(last=False)
        return None

    async def run(self) -> None:
        """Perform queued writes, one at a time, until cancelled."""
        while True:
            item = self._next()
            if item is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._perform(*item)

    async def drain(self) -> None:
        """Perform every queued write now (tests, and a last flush before uninstall cleanup)."""
        while (item := self._next()) is not None:
            await self._perform(*item)

    async def _perform(self, write_key: WriteKey, queued: _Queued) -> None:
        kind, key = write_key

        async def permit() -> None:
            if await self._bucket.take():
                self.deferred[kind] += 1

        try:
            outcome = await queued.perform(permit)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a bug or an I/O error in one write must not stop the others
            log.warning("cluster write failed", extra={"kind": kind, "object": str(key), "error": str(error)})
            outcome = Outcome.FAILED
        self.outcomes[(kind, outcome)] += 1
        if self._newest.get(write_key) is not queued:
            return  # a newer write of the object was submitted meanwhile: it says what to write
        if outcome in RETRIED:
            self._retry_later(kind, key, queued)
        else:
            del self._newest[write_key]

    def _retry_later(self, kind: str, key: Hashable, queued: _Queued) -> None:
        async def again() -> None:
            await self._clock.sleep(self._retry_seconds)
            if self._newest.get((kind, key)) is queued:
                self.submit(kind, key, queued.perform, urgent=queued.urgent)

        task = asyncio.get_running_loop().create_task(again(), name=f"limitguard-write-retry-{kind}")
        self._retries.add(task)
        task.add_done_callback(self._retries.discard)
