"""Work only the leader does: the cluster writes (and the writers that decide them).

client-go's leader election runs `OnStartedLeading(ctx)` when a candidate becomes leader and cancels
that context on `OnStoppedLeading`; this is the same for limitguard. The tasks start when this replica
*decides* (it leads and its cache has caught up with what the previous leader approved, so what it
writes agrees with the ledger), and are cancelled when it steps down; the write queue is cleared then,
and the next leader starts from what it observes in the cluster, so a leader change writes only what
differs. A single replica (no replica set) leads from the start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from limitguard.kube.writes import ClusterWrites

log = logging.getLogger(__name__)

TaskFactory = Callable[[], Coroutine[Any, Any, None]]


class LeaderWork:
    """Named coroutines run while leading, and the one queue of cluster writes they submit to."""

    def __init__(self, writes: ClusterWrites) -> None:
        self.writes = writes
        self._factories: dict[str, TaskFactory] = {"cluster-writes": writes.run}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    @property
    def running(self) -> bool:
        return bool(self._tasks)

    def add(self, name: str, factory: TaskFactory) -> None:
        """Register work to run while leading (started at once when already leading)."""
        if name in self._factories:
            raise ValueError(f"leader work {name!r} is registered already")
        self._factories[name] = factory
        if self._tasks:
            self._start(name, factory)

    def started_leading(self) -> None:
        if self._tasks:
            return
        log.info("leader work starting", extra={"tasks": sorted(self._factories)})
        for name, factory in self._factories.items():
            self._start(name, factory)

    def stopped_leading(self) -> None:
        if self._tasks:
            log.info("leader work stopping", extra={"tasks": sorted(self._tasks)})
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        self.writes.clear()

    async def stop(self) -> None:
        """Cancel the tasks and wait for them to end (shutdown)."""
        tasks = list(self._tasks.values())
        self.stopped_leading()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _start(self, name: str, factory: TaskFactory) -> None:
        task = asyncio.get_running_loop().create_task(factory(), name=f"limitguard-leader-{name}")
        task.add_done_callback(lambda done: self._ended(name, done))
        self._tasks[name] = task

    def _ended(self, name: str, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        if self._tasks.get(name) is task:
            del self._tasks[name]
        if error := task.exception():
            log.error("leader work ended with an error", extra={"task": name, "error": repr(error)})
