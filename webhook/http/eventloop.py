"""The event loop `limitguard serve` runs on: uvloop where it is installed, else asyncio's own.

A request to the webhook spends most of its time outside limitguard's policy: in the event loop,
the TLS record layer and aiohttp's protocol. asyncio's loop runs its TLS layer (sslproto) and its
socket callbacks in Python; uvloop runs both in C over libuv. On the bench (docs/benchmarks.md)
that is about 75,000 fewer CPU instructions per admission request, for the same bytes on the wire.

`auto` falls back to asyncio quietly where uvloop is not installed (Windows, PyPy, a minimal
image); `uvloop` insists and fails at start-up with a clear error; `asyncio` opts out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from limitguard.errors import LimitguardError

EVENT_LOOPS = ("auto", "uvloop", "asyncio")

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


class EventLoopError(LimitguardError):
    """The event loop asked for cannot be had."""


def loop_factory(choice: str) -> tuple[str, LoopFactory]:
    """The loop to run on for *choice* (one of EVENT_LOOPS): its name and its factory."""
    if choice not in EVENT_LOOPS:
        raise EventLoopError(f"unknown event loop {choice!r}; expected one of {', '.join(EVENT_LOOPS)}")
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise EventLoopError(
                    "--event-loop uvloop: uvloop is not installed (pip install uvloop)"
                ) from None
        else:
            return "uvloop", uvloop.new_event_loop
    return "asyncio", asyncio.new_event_loop
