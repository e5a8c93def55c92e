"""A clock for tests and benchmarks: time moves only when the test says so (see limitguard.clock)."""

from __future__ import annotations

import asyncio
import heapq
import itertools

class FakeClock:
    """Time that moves only when told to.

    `advance()` moves it; every sleep whose deadline is reached then resumes, earliest deadline
    first and, for equal deadlines, in the order the sleeps began. With `autojump=True` a sleep
    moves the clock to its own deadline at once (time passes only by sleeping), so retry loops run
    without real waits yet see consistent time. Every sleep yields to the event loop at least once,
    like `asyncio.sleep(0)`.
    """

    def __init__(self, start: float = 0.0, *, autojump: bool = False) -> None:
        self._now = start
        self.autojump = autojump
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._watching_sleepers: set[asyncio.Event] = set()  # one per wait_for_sleepers() call
        self.slept: list[float] = []  # every requested sleep, in order (what backoff asked for)

    def now(self) -> float:
        return self._now

    @property
    def sleepers(self) -> int:
        """Sleeps begun and not yet resumed (cancelled ones excluded)."""
        return sum(1 for _, _, future in self._sleepers if not future.done())

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + max(0.0, seconds), next(self._order), future))
        self._notify()
        if self.autojump or seconds <= 0:
            self.advance_to(self._now + max(0.0, seconds))
        try:
            await future
        finally:
            self._notify()  # cancelled or resumed: the number of sleepers changed
        await asyncio.sleep(0)  # a resolved future does not yield by itself

    def advance(self, seconds: float) -> None:
        """Move time forward by *seconds* and resume every sleep that is now due."""
        if seconds < 0:
            raise ValueError("a monotonic clock does not go back")
        self.advance_to(self._now + seconds)

    def advance_to(self, when: float) -> None:
        self._now = max(self._now, when)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)  # callbacks are scheduled in this order: deterministic

    async def wait_for_sleepers(self, count: int) -> None:
        """Return once at least *count* sleeps are pending (e.g. every reflector is backing off)."""
        while self.sleepers < count:
            changed = asyncio.Event()
            self._watching_sleepers.add(changed)
            try:
                await changed.wait()
            finally:
                self._watching_sleepers.discard(changed)

    def _notify(self) -> None:
        for changed in self._watching_sleepers:
            changed.set()
