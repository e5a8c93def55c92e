"""Reflector internals that the end-to-end tests cannot pin down: slicing and backoff bounds."""

from __future__ import annotations

import asyncio
import random
import time

from limitguard.kube.reflector import Backoff, KindSink, Reflector, ReflectorSettings


def slow_sink(applied: list[str], cost_seconds: float) -> KindSink:
    def upsert(obj) -> str:  # type: ignore[no-untyped-def]
        until = time.perf_counter() + cost_seconds
        while time.perf_counter() < until:  # CPU-bound, like parsing limits
            pass
        applied.append(obj["metadata"]["name"])
        return obj["metadata"]["name"]

    return KindSink(upsert, lambda obj: None, lambda: list(applied), applied.remove, lambda synced: None)


async def test_a_big_page_is_applied_in_slices_that_let_the_loop_run() -> None:
    applied: list[str] = []
    reflector = Reflector(
        None,
        "pods",
        "/api/v1/pods",
        slow_sink(applied, 0.0002),  # type: ignore[arg-type]
        settings=ReflectorSettings(slice_seconds=0.004),
    )
    gaps: list[float] = []
    stop = False

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop:
            await asyncio.sleep(0)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    page = [{"metadata": {"name": f"pod-{index}"}} for index in range(1000)]  # ~200 ms of work
    seen: set[str] = set()
    await reflector._apply_page(page, seen)
    stop = True
    await ticking

    assert len(seen) == 1000 and len(applied) == 1000
    assert len(gaps) >= 20  # the loop ran other work many times during the page
    assert max(gaps) < 0.1  # never one 200 ms block


def test_backoff_grows_to_its_cap_with_jitter_and_resets() -> None:
    backoff = Backoff(0.5, 8.0, random.Random(7))
    delays = [backoff.next_delay() for _ in range(8)]
    ceilings = [0.5, 1, 2, 4, 8, 8, 8, 8]
    assert all(c / 2 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert len(set(delays)) == len(delays)
    backoff.reset()
    assert 0.25 <= backoff.next_delay() <= 0.5
