"""The FakeClock the live-feed tests drive time with: sleeps resume only when time reaches them."""

from __future__ import annotations

import asyncio

import pytest

from limitguard.clock import SystemClock
from limitguard.testing.clock import FakeClock


async def test_sleeps_resume_when_advanced_past_their_deadline_earliest_first() -> None:
    clock = FakeClock(start=100.0)
    woke: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(f"{name}@{clock.now():g}")

    tasks = [asyncio.create_task(sleeper(name, s)) for name, s in (("c", 3), ("a", 1), ("b", 1), ("d", 5))]
    await clock.wait_for_sleepers(4)
    clock.advance(0.5)
    await asyncio.sleep(0)
    assert woke == [] and clock.sleepers == 4

    clock.advance(2.5)  # t=103: a and b (in the order they began), then c
    await asyncio.gather(*tasks[:3])
    assert woke == ["a@103", "b@103", "c@103"]
    assert clock.sleepers == 1 and not tasks[3].done()

    clock.advance(2)
    await tasks[3]
    assert woke[-1] == "d@105"
    assert clock.slept == [3, 1, 1, 5]


async def test_a_named_tasks_sleep_is_waited_for_whatever_else_sleeps() -> None:
    clock = FakeClock()
    other = asyncio.create_task(clock.sleep(1), name="reflector-nodes")
    await clock.wait_for_sleepers(1)
    waiting = asyncio.create_task(clock.wait_for_sleeper("reflector-pods"))
    await asyncio.sleep(0)
    assert not waiting.done()  # a sleeper, but not the one asked for
    pods = asyncio.create_task(clock.sleep(1), name="reflector-pods")
    await waiting
    assert sorted(clock.sleeping_tasks()) == ["reflector-nodes", "reflector-pods"]
    clock.advance(1)  # both resumed: neither counts as sleeping any more, even before it runs
    assert clock.sleeping_tasks() == []
    await asyncio.gather(other, pods)


async def test_autojump_moves_time_by_exactly_what_was_slept() -> None:
    clock = FakeClock(autojump=True)
    for seconds in (0.5, 2.0, 0.25):
        await clock.sleep(seconds)
    assert clock.now() == 2.75
    with pytest.raises(ValueError):
        clock.advance(-1)


async def test_a_cancelled_sleep_is_no_longer_counted() -> None:
    clock = FakeClock()
    task = asyncio.create_task(clock.sleep(10))
    await clock.wait_for_sleepers(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert clock.sleepers == 0
    clock.advance(20)  # resuming nothing is fine


async def test_a_zero_sleep_yields_once_without_moving_time() -> None:
    clock = FakeClock(start=7.0)
    order: list[str] = []

    async def other() -> None:
        order.append("other")

    task = asyncio.create_task(other())
    await clock.sleep(0)
    order.append("after sleep")
    await task
    assert order == ["other", "after sleep"] and clock.now() == 7.0


async def test_system_clock_is_monotonic() -> None:
    clock = SystemClock()
    first = clock.now()
    await clock.sleep(0)
    assert clock.now() >= first
