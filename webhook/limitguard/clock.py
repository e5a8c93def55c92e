"""The one source of time for the live feed: the ledger's TTL, the reflector's backoff, healthy-watch
timing and event slicing, and the token refresh all read it.

Production uses `SystemClock` (monotonic, so a wall-clock step never expires or revives anything).
Tests and benchmarks pass a `limitguard.testing.clock.FakeClock` and move time themselves, so no verdict depends on how
fast the machine is or how long a sleep really took.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds and a sleep measured on the same clock."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """`time.monotonic` and `asyncio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
