"""Clocks for tests and benchmarks: time moves only when the test says so (see limitguard.clock).

Both clocks satisfy the `limitguard.clock.Clock` protocol. `FakeClock.advance` is synchronous:
sleeps that fall due resume when the test next yields. `ManualClock.advance` is a coroutine that,
after each wake-up, waits until every woken task sleeps again or ends - the election tests step
leases period by period with it and see each period's effect before the next begins. `Timers`
stands in for a loop's call_later: callbacks run when the test fires them.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable


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
        # (deadline, order begun, the sleep's future, the sleeping task's name)
        self._sleepers: list[tuple[float, int, asyncio.Future[None], str]] = []
        self._order = itertools.count()
        self._watching_sleepers: set[asyncio.Event] = set()  # one per wait_for_sleepers() call
        self.slept: list[float] = []  # every requested sleep, in order (what backoff asked for)

    def now(self) -> float:
        return self._now

    @property
    def sleepers(self) -> int:
        """Sleeps begun and not yet resumed (cancelled ones excluded)."""
        return sum(1 for _, _, future, _ in self._sleepers if not future.done())

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = asyncio.current_task()
        name = task.get_name() if task is not None else ""
        heapq.heappush(self._sleepers, (self._now + max(0.0, seconds), next(self._order), future, name))
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
            _, _, future, _ = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)  # callbacks are scheduled in this order: deterministic

    async def wait_for_sleepers(self, count: int) -> None:
        """Return once at least *count* sleeps are pending (e.g. every reflector is backing off)."""
        await self._wait(lambda: self.sleepers >= count)

    async def _wait(self, condition: Callable[[], bool]) -> None:
        while not condition():
            changed = asyncio.Event()
            self._watching_sleepers.add(changed)
            try:
                await changed.wait()
            finally:
                self._watching_sleepers.discard(changed)

    async def wait_for_sleeper(self, task_name: str) -> None:
        """Return once the task named *task_name* is sleeping: other tasks' sleeps (a periodic
        check, another reflector's backoff) do not count, so the test advances past its sleep."""
        await self._wait(lambda: task_name in self.sleeping_tasks())

    def sleeping_tasks(self) -> list[str]:
        """The names of the tasks whose sleep has not resumed yet, in no particular order."""
        return [name for _, _, future, name in self._sleepers if not future.done()]

    def _notify(self) -> None:
        for changed in self._watching_sleepers:
            changed.set()


MANUAL_CLOCK_HANG_GUARD_SECONDS = 120.0  # bounds a real-time wait, never a verdict


class ManualClock:
    """Time that moves only by `await advance(seconds)`, which lets each woken task settle."""

    def __init__(self, start: float = 1000.0) -> None:
        self.time = start
        self._sleepers: dict[asyncio.Task, tuple[float, asyncio.Future[None]]] = {}

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers[task] = (self.time + max(seconds, 0.0), future)
        try:
            await future
        finally:
            if self._sleepers.get(task, (0.0, None))[1] is future:
                del self._sleepers[task]

    def is_sleeping(self, task: asyncio.Task | None) -> bool:
        entry = self._sleepers.get(task) if task is not None else None
        return entry is not None and not entry[1].done()

    async def advance(self, seconds: float) -> None:
        target = self.time + seconds
        while True:
            due = [
                (deadline, task, future)
                for task, (deadline, future) in self._sleepers.items()
                if deadline <= target and not future.done()
            ]
            if not due:
                break
            first = min(deadline for deadline, _, _ in due)
            self.time = max(self.time, first)
            woken = [(task, future) for deadline, task, future in due if deadline <= first]
            for _, future in woken:
                future.set_result(None)
            await self._quiet([task for task, _ in woken])
        self.time = max(self.time, target)

    async def _quiet(self, tasks: list[asyncio.Task]) -> None:
        """Until each woken task sleeps again (a new, pending future) or has finished."""
        deadline = time.monotonic() + MANUAL_CLOCK_HANG_GUARD_SECONDS

        def settled(task: asyncio.Task) -> bool:
            return task.done() or self.is_sleeping(task)

        while not all(settled(task) for task in tasks):
            assert time.monotonic() < deadline, "a woken task neither slept again nor finished"
            await asyncio.sleep(0.001)


class Timers:
    """call_later that only records: the test fires the callbacks when it chooses."""

    def __init__(self) -> None:
        self.pending: list[tuple[Callable[[], None], asyncio.TimerHandle]] = []
        self.delays: list[float] = []  # every delay asked for, in order

    def call_later(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        handle = asyncio.get_running_loop().call_later(3600, lambda: None)  # a real, cancellable handle
        self.pending.append((callback, handle))
        self.delays.append(delay)
        return handle

    def fire(self) -> int:
        fired = 0
        pending, self.pending = self.pending, []
        for callback, handle in pending:
            if not handle.cancelled():
                handle.cancel()
                callback()
                fired += 1
        return fired
