"""Reflector internals that the end-to-end tests cannot pin down: slicing and backoff bounds.

Slicing is driven by the reflector's clock: here a FakeClock that the sink advances per object, as
if each object cost that much CPU. A ticker task logs every turn it gets on the event loop, so the
log shows exactly where the reflector yielded, on any machine.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable

import orjson
import pytest

from limitguard.kube.reflector import Backoff, KindSink, Reflector, ReflectorSettings, WatchEnd
from limitguard.testing.clock import FakeClock

SLICE = 1 / 256  # ~4 ms; every duration here is a power-of-two fraction, so sums are exact


def costly_sink(clock: FakeClock, log: list[str], cost_seconds: float) -> KindSink:
    """Each object applied moves the clock by *cost_seconds* (the work it stands for)."""
    held: list[str] = []

    def upsert(obj) -> str:  # type: ignore[no-untyped-def]
        clock.advance(cost_seconds)
        name = obj["metadata"]["name"]
        log.append(name)
        held.append(name)
        return name

    def remove(name: str) -> None:
        clock.advance(cost_seconds)
        log.append(f"-{name}")
        held.remove(name)

    return KindSink(upsert, upsert, lambda: set(held), remove, lambda synced: None)


def reflector_on(clock: FakeClock, sink: KindSink) -> Reflector:
    settings = ReflectorSettings(slice_seconds=SLICE)
    return Reflector(None, "pods", "/api/v1/pods", sink, settings=settings, clock=clock)  # type: ignore[arg-type]


async def with_ticker(log: list[str], work: Callable[[], object]) -> None:
    """Run *work* while a ticker logs "tick" each time the loop lets it run."""
    done = False

    async def ticker() -> None:
        while not done:
            log.append("tick")
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    await work()  # type: ignore[misc]
    done = True
    await ticking


def expected(names: list[str], per_slice: int) -> list[str]:
    """*names* with one tick after every *per_slice* of them: a used-up slice, one turn for others."""
    out: list[str] = []
    for index, name in enumerate(names, start=1):
        out.append(name)
        if index % per_slice == 0:
            out.append("tick")
    return out


@pytest.mark.parametrize(
    ("cost", "per_slice"),
    [(SLICE / 4, 4), (SLICE * 3 / 8, 3), (SLICE, 1), (SLICE * 4, 1)],
    ids=["4-per-slice", "3-per-slice", "exactly-a-slice", "over-a-slice"],
)
async def test_a_page_yields_to_the_loop_exactly_when_a_slice_is_used_up(cost, per_slice) -> None:
    clock, log = FakeClock(), []
    reflector = reflector_on(clock, costly_sink(clock, log, cost))
    page = [{"metadata": {"name": f"pod-{index}"}} for index in range(24)]
    stale = {"pod-3", "gone"}
    applied: list[int] = []

    async def apply() -> None:
        applied.append(await reflector._apply_page(page, stale))

    await with_ticker(log, apply)

    assert applied == [24] and stale == {"gone"}  # every listed key crossed off what was held
    assert log == expected([f"pod-{index}" for index in range(24)], per_slice)


async def test_work_that_takes_no_time_is_never_interrupted() -> None:
    clock, log = FakeClock(), []
    reflector = reflector_on(clock, costly_sink(clock, log, 0.0))
    page = [{"metadata": {"name": f"pod-{index}"}} for index in range(1000)]

    await with_ticker(log, lambda: reflector._apply_page(page, set()))

    assert "tick" not in log and len(log) == 1000  # the yield follows time used, not object count


async def test_relist_cleanup_is_sliced_too() -> None:
    clock, log = FakeClock(), []
    sink = costly_sink(clock, log, SLICE / 2)
    reflector = reflector_on(clock, sink)
    for index in range(6):
        sink.upsert({"metadata": {"name": f"old-{index}"}})
    log.clear()

    await with_ticker(log, lambda: reflector._remove_stale({f"old-{index}" for index in range(1, 6)}))

    assert log == expected([f"-old-{index}" for index in range(1, 6)], 2)


class OneChunkStream:
    """A watch response body delivered as one chunk, then end of stream; reading never yields."""

    def __init__(self, body: bytes) -> None:
        self.chunks = [body, b""]

    async def readany(self) -> bytes:
        return self.chunks.pop(0)


async def test_a_watch_burst_yields_to_the_loop_exactly_when_a_slice_is_used_up() -> None:
    clock, log = FakeClock(), []
    caught_up: list[int] = []
    sink = costly_sink(clock, log, SLICE / 4)
    sink = KindSink(
        sink.upsert, sink.delete, sink.held_keys, sink.remove, sink.mark_synced,
        caught_up=lambda: caught_up.append(len(log)),
    )  # fmt: skip
    reflector = reflector_on(clock, sink)
    events = [
        {
            "type": "ADDED",
            "object": {"metadata": {"name": f"pod-{index}", "resourceVersion": str(10 + index)}},
        }
        for index in range(10)
    ]
    body = b"".join(orjson.dumps(event) + b"\n" for event in events)
    ended: list[WatchEnd] = []

    async def consume() -> None:
        ended.append(await reflector._consume(OneChunkStream(body), Counter()))  # type: ignore[arg-type]

    await with_ticker(log, consume)

    assert ended == [WatchEnd.CLOSED]
    assert log == expected([f"pod-{index}" for index in range(10)], 4)
    assert reflector.resource_version == "19"
    assert caught_up == [len(log)]  # once, after the chunk was applied


def test_backoff_grows_to_its_cap_with_jitter_and_resets() -> None:
    backoff = Backoff(0.5, 8.0, random.Random(7))
    delays = [backoff.next_delay() for _ in range(8)]
    ceilings = [0.5, 1, 2, 4, 8, 8, 8, 8]
    assert all(c / 2 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert len(set(delays)) == len(delays)
    backoff.reset()
    assert 0.25 <= backoff.next_delay() <= 0.5
