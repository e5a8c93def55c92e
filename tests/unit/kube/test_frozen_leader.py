"""A leader frozen (SIGSTOP) past its lease never decides on the stale lease when it continues.

client-go (tools/leaderelection/leaderelection.go, renew: a leader stops once renewDeadline has
passed since its last successful renew) and CLOCK_MONOTONIC keeps counting while a process is
stopped. Each replica has its own clock here; the frozen one's time jumps without its tasks running,
as a stopped process's would, while the other replica's loop runs through the whole freeze.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

from limitguard.errors import LimitguardError
from limitguard.kube.leader import ElectionTiming, Elector
from limitguard.testing.clock import ManualClock

TIMING = ElectionTiming(15.0, 10.0, 2.0)


class Conflict(LimitguardError):
    """409: the resourceVersion written is not the stored one."""


class OneLease:
    """The apiserver's compare-and-swap on one Lease (coordination.k8s.io/v1)."""

    def __init__(self) -> None:
        self.stored: dict[str, Any] | None = None
        self.version = 0

    async def get(self) -> Mapping[str, Any] | None:
        return copy.deepcopy(self.stored)

    def _store(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        self.version += 1
        self.stored = copy.deepcopy(dict(obj))
        self.stored["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(self.stored)

    async def create(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.stored is not None:
            raise Conflict("exists")
        return self._store(obj)

    async def update(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.stored is None or obj["metadata"].get("resourceVersion") != str(self.version):
            raise Conflict("resourceVersion changed")
        return self._store(obj)


async def settled(clock: ManualClock, task: asyncio.Task[None]) -> None:
    """Until the loop waits on its clock again (its round is done)."""
    while not clock.is_sleeping(task):
        await asyncio.sleep(0)


def elector(api: OneLease, name: str, clock: ManualClock) -> Elector:
    return Elector(api, "ns", "lease", name, f"{name}:8443", TIMING, now=clock.now, sleep=clock.sleep)


async def test_a_frozen_leader_continues_without_deciding_and_steps_down() -> None:
    api, clock_a, clock_b = OneLease(), ManualClock(), ManualClock()
    a, b = elector(api, "a", clock_a), elector(api, "b", clock_b)
    a_task = asyncio.create_task(a.run())
    await settled(clock_a, a_task)
    assert a.deciding  # created the Lease: decides at once
    b_task = asyncio.create_task(b.run())
    await settled(clock_b, b_task)
    assert b.leader_address() == "a:8443"

    # a is frozen: b's time runs, a's loop does not; b takes over only after the lease's duration
    for _ in range(int(TIMING.lease_duration) - 1):
        await clock_b.advance(1)
        assert not b.leading
    await clock_b.advance(TIMING.retry_period * 3.4)  # expiry, plus at most one jittered attempt
    assert b.deciding and api.stored is not None and api.stored["spec"]["holderIdentity"] == "b"

    clock_a.time += TIMING.lease_duration + TIMING.retry_period * 3.4  # continued: its clock moved on
    assert not a.deciding  # before its loop has run a single round
    await clock_a.advance(TIMING.retry_period)  # its loop wakes: the renew is refused
    assert not a.leading and a.events[-1][0] == "stepped-down"
    assert a.leader_address() == "b:8443"  # it forwards to the new leader from now on
    assert b.deciding
    a.resign()
    b.resign()
    a_task.cancel()
    b_task.cancel()
    await asyncio.gather(a_task, b_task, return_exceptions=True)
