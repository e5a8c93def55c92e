"""The leader's work (cluster writes) runs only while this replica decides, as client-go's
OnStartedLeading / OnStoppedLeading: a leader that steps down stops writing and forgets its queue."""

from __future__ import annotations

import asyncio

import pytest

from limitguard.kube.leader import Elector
from limitguard.kube.leaderwork import LeaderWork
from limitguard.kube.writes import ClusterWrites, Outcome, Permit
from limitguard.testing.clock import ManualClock
from tests.unit.kube.test_frozen_leader import TIMING, OneLease, settled


class Beats:
    """Leader work that counts how often it ran and whether it is running now."""

    def __init__(self) -> None:
        self.started = 0
        self.running = False

    async def work(self) -> None:
        self.started += 1
        self.running = True
        try:
            await asyncio.Event().wait()
        finally:
            self.running = False


def noted(into: list[str]):
    async def perform(permit: Permit) -> Outcome:
        await permit()
        into.append("written")
        return Outcome.WRITTEN

    return perform


async def test_work_runs_while_leading_and_stopping_clears_the_queue() -> None:
    clock = ManualClock()
    work, beats = LeaderWork(ClusterWrites(clock)), Beats()
    work.add("labels", beats.work)
    await asyncio.sleep(0)
    assert beats.started == 0  # not leading yet
    work.started_leading()
    work.started_leading()  # idempotent: no second copy of any task
    await asyncio.sleep(0)
    assert beats.started == 1 and beats.running and work.running
    late = Beats()
    work.add("reports", late.work)  # registered while leading: starts at once
    await asyncio.sleep(0)
    assert late.running
    written: list[str] = []
    work.writes.submit("label", "n1", noted(written))  # queued, not yet written ...
    work.stopped_leading()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not beats.running and not late.running and not work.running
    assert work.writes.queued() == 0 and written == []  # ... and dropped: the next leader starts
    with pytest.raises(ValueError):
        work.add("labels", beats.work)
    await work.stop()


async def test_the_elector_starts_the_work_when_it_decides_and_stops_it_when_it_steps_down() -> None:
    api, clock = OneLease(), ManualClock()
    work, beats = LeaderWork(ClusterWrites(clock)), Beats()
    work.add("labels", beats.work)
    elector = Elector(
        api, "ns", "lease", "a", "a:8443", TIMING, now=clock.now, sleep=clock.sleep, callbacks=work
    )
    task = asyncio.create_task(elector.run())
    await settled(clock, task)
    await asyncio.sleep(0)
    assert elector.deciding and beats.running  # created the Lease: decides, and works, at once

    assert api.stored is not None
    api.stored["spec"]["holderIdentity"] = "b"  # another replica took the Lease
    api.version += 1
    api.stored["metadata"]["resourceVersion"] = str(api.version)
    elector.observed = None  # its next round reads the Lease instead of renewing
    clock.time += TIMING.renew_deadline  # past renewDeadline since its last renew
    await clock.advance(TIMING.retry_period)
    await asyncio.sleep(0)
    assert not elector.leading and not beats.running and beats.started == 1
    elector.resign()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await work.stop()
