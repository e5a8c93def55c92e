"""The one queue of cluster writes: coalescing per object, urgent writes first, one token bucket,
retries, all on an injected clock (no verdict depends on how fast the machine is)."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from limitguard.kube.write_metrics import ClusterWritesCollector
from limitguard.kube.writes import ClusterWrites, Outcome, Permit, TokenBucket
from limitguard.testing.clock import FakeClock


class Recorder:
    """Writes that record (time, kind, key, value) when they get their permit."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.done: list[tuple[float, str, str, int]] = []

    def write(self, kind: str, key: str, value: int, outcome: Outcome = Outcome.WRITTEN):
        async def perform(permit: Permit) -> Outcome:
            if outcome is Outcome.UNCHANGED:
                return outcome  # nothing to change: no request, no token
            await permit()
            self.done.append((self.clock.now(), kind, key, value))
            return outcome

        return perform


async def test_a_newer_write_replaces_a_queued_one_and_keeps_its_place() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock, max_per_second=1, burst=1), Recorder(clock)
    writes.submit("label", "a", seen.write("label", "a", 1))
    writes.submit("label", "b", seen.write("label", "b", 1))
    writes.submit("label", "a", seen.write("label", "a", 2))
    writes.submit("label", "a", seen.write("label", "a", 3))
    assert writes.queued() == 2
    await writes.drain()
    assert [(key, value) for _, _, key, value in seen.done] == [("a", 3), ("b", 1)]
    assert writes.outcomes[("label", Outcome.WRITTEN)] == 2


async def test_urgent_writes_go_first_and_a_normal_write_made_urgent_moves_up() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock, max_per_second=10, burst=10), Recorder(clock)
    writes.submit("label", "raise-1", seen.write("label", "raise-1", 1))
    writes.submit("label", "raise-2", seen.write("label", "raise-2", 1))
    writes.submit("label", "lower", seen.write("label", "lower", 1), urgent=True)
    writes.submit("label", "raise-2", seen.write("label", "raise-2", 0), urgent=True)
    # A later normal write of an object queued as urgent keeps it urgent (it still lowers).
    writes.submit("label", "lower", seen.write("label", "lower", 2))
    await writes.drain()
    assert [(key, value) for _, _, key, value in seen.done] == [("lower", 2), ("raise-2", 0), ("raise-1", 1)]


async def test_a_write_submitted_first_goes_before_every_urgent_one() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock, max_per_second=10, burst=10), Recorder(clock)
    writes.submit("label", "raise", seen.write("label", "raise", 1))
    writes.submit("label", "lower", seen.write("label", "lower", 1), urgent=True)
    writes.submit("label", "new-node", seen.write("label", "new-node", 1), first=True)
    writes.submit("label", "raise", seen.write("label", "raise", 2), first=True)  # a queued one moves up
    await writes.drain()
    assert [key for _, _, key, _ in seen.done] == ["raise", "new-node", "lower"]


async def test_the_rate_limit_holds_for_every_kind_together() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock, max_per_second=2, burst=3), Recorder(clock)
    for index in range(5):
        writes.submit("label", f"node-{index}", seen.write("label", f"node-{index}", 1))
        writes.submit("report", f"node-{index}", seen.write("report", f"node-{index}", 1))
    await writes.drain()
    times = [when for when, *_ in seen.done]
    assert len(times) == 10
    # The burst goes at once, then one every half second: never more than burst + rate x t by t.
    assert times[:3] == [0.0, 0.0, 0.0]
    for index, when in enumerate(times):
        assert index + 1 <= 3 + 2 * when + 1e-9
    assert times[-1] == pytest.approx(3.5)
    assert writes.deferred["label"] + writes.deferred["report"] == 7


async def test_a_write_that_changes_nothing_takes_no_token() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock, max_per_second=1, burst=1), Recorder(clock)
    for index in range(20):
        writes.submit("label", f"same-{index}", seen.write("label", f"same-{index}", 1, Outcome.UNCHANGED))
    writes.submit("label", "changed", seen.write("label", "changed", 1))
    await writes.drain()
    assert seen.done == [(0.0, "label", "changed", 1)]
    assert writes.outcomes[("label", Outcome.UNCHANGED)] == 20
    assert not writes.deferred


async def test_a_conflict_is_retried_after_the_delay_unless_a_newer_write_came() -> None:
    clock = FakeClock()
    writes, seen = ClusterWrites(clock, retry_seconds=5), Recorder(clock)
    writes.submit("taint", "n1", seen.write("taint", "n1", 1, Outcome.CONFLICT))
    writes.submit("taint", "n2", seen.write("taint", "n2", 1, Outcome.FAILED))
    runner = asyncio.create_task(writes.run())
    await clock.wait_for_sleepers(2)  # both retries wait
    writes.submit("taint", "n2", seen.write("taint", "n2", 2))  # a newer write supersedes n2's retry
    clock.advance(5)
    for _ in range(20):
        await asyncio.sleep(0)
    runner.cancel()
    values = [(key, value) for _, _, key, value in seen.done]
    assert values[:2] == [("n1", 1), ("n2", 1)]
    assert ("n2", 2) in values and values.count(("n1", 1)) == 2  # n1 once more, n2 not retried as 1
    assert values.count(("n2", 1)) == 1


async def test_an_exception_in_one_write_does_not_stop_the_others() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock), Recorder(clock)

    async def broken(permit: Permit) -> Outcome:
        raise RuntimeError("boom")

    writes.submit("report", "bad", broken)
    writes.submit("report", "good", seen.write("report", "good", 1))
    await writes.drain()
    assert writes.outcomes[("report", Outcome.FAILED)] == 1
    assert [key for _, _, key, _ in seen.done] == ["good"]
    writes.clear()  # leadership lost: the pending retry of "bad" is dropped too
    assert writes.queued() == 0


async def test_clear_and_cancel_drop_queued_writes() -> None:
    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock), Recorder(clock)
    writes.submit("label", "a", seen.write("label", "a", 1))
    writes.submit("label", "b", seen.write("label", "b", 1), urgent=True)
    writes.cancel("label", "b")
    assert writes.queued("label") == 1 and writes.queued("report") == 0
    writes.clear()
    await writes.drain()
    assert seen.done == []


def test_a_bucket_needs_a_rate_and_a_burst() -> None:
    with pytest.raises(ValueError):
        TokenBucket(FakeClock(), 0, 1)
    with pytest.raises(ValueError):
        TokenBucket(FakeClock(), 1, 0)


async def test_the_collector_reads_the_counts_at_scrape_time() -> None:

    clock = FakeClock(autojump=True)
    writes, seen = ClusterWrites(clock, max_per_second=1, burst=1), Recorder(clock)
    registry = CollectorRegistry()
    registry.register(ClusterWritesCollector(writes))
    writes.submit("label", "a", seen.write("label", "a", 1))
    writes.submit("label", "b", seen.write("label", "b", 1))
    writes.submit("taint", "a", seen.write("taint", "a", 1, Outcome.UNCHANGED))
    assert registry.get_sample_value("limitguard_cluster_writes_queued") == 3
    await writes.drain()
    value = registry.get_sample_value
    assert value("limitguard_cluster_writes_total", {"kind": "label", "result": "written"}) == 2
    assert value("limitguard_cluster_writes_total", {"kind": "taint", "result": "unchanged"}) == 1
    assert value("limitguard_cluster_writes_deferred_total", {"kind": "label"}) == 1
    assert value("limitguard_cluster_writes_queued") == 0


async def test_a_rate_whose_interval_is_not_exact_in_binary_still_hands_out_tokens() -> None:
    """5 a second: a sleep of 0.2 s refills 0.9999999999999998 of a token on a clock that jumps to
    each deadline; without a tolerance the bucket slept ever shorter and never handed it out."""
    clock = FakeClock(autojump=True)
    bucket = TokenBucket(clock, rate=5, burst=1)
    for _ in range(21):
        await asyncio.wait_for(bucket.take(), timeout=5)  # a hang guard only
    assert clock.now() >= 4.0 - 1e-9
