"""A clock that moves only when the test says so, for code that takes `now` and `sleep` callables.

`advance(seconds)` wakes the sleepers in deadline order and, after each wake-up, waits (in real
time, bounded as a hang guard only) until every woken task is asleep again or finished, so a test
sees the effect of each period before the next one starts. Outcomes never depend on machine speed.
"""

from __future__ import annotations

import asyncio
import time

HANG_GUARD_SECONDS = 60.0


class ManualClock:
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
        deadline = time.monotonic() + HANG_GUARD_SECONDS

        def settled(task: asyncio.Task) -> bool:
            return task.done() or self.is_sleeping(task)

        while not all(settled(task) for task in tasks):
            assert time.monotonic() < deadline, "a woken task neither slept again nor finished"
            await asyncio.sleep(0.001)
