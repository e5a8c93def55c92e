"""The event loop `limitguard serve` runs on: uvloop where it is installed, else asyncio's own.

A request to the webhook spends most of its time outside limitguard's policy: in the event loop,
the TLS record layer and aiohttp's protocol. asyncio's loop runs its TLS layer (sslproto) and its
socket callbacks in Python; uvloop runs both in C over libuv. On the bench (docs/benchmarks.md)
that is about 75,000 fewer CPU instructions per admission request, for the same bytes on the wire.

`auto` falls back to asyncio quietly where uvloop is not installed (Windows, PyPy, a minimal
image); `uvloop` insists and fails at start-up with a clear error; `asyncio` opts out.

`running_loop()` is `asyncio.get_running_loop()` for the request path: on CPython 3.11 every
get_running_loop() makes a getpid() system call (to notice a fork), and the request path asks for
the loop several times a request.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from threading import get_ident

from limitguard.errors import LimitguardError

EVENT_LOOPS = ("auto", "uvloop", "asyncio")

LoopFactory = Callable[[], asyncio.AbstractEventLoop]
CallLater = Callable[[float, Callable[[], None]], asyncio.TimerHandle]  # a loop's, or a test's timer


class EventLoopError(LimitguardError):
    """The event loop asked for cannot be had."""


# The loop loop_factory's factory made last, and the thread that made it.
_made: tuple[asyncio.AbstractEventLoop, int] | None = None


def _forget() -> None:
    global _made
    _made = None


os.register_at_fork(after_in_child=_forget)  # a forked child runs no loop of its parent's


def _remembered(new_loop: LoopFactory) -> LoopFactory:
    def make() -> asyncio.AbstractEventLoop:
        global _made
        loop = new_loop()
        _made = (loop, get_ident())
        return loop

    return make


def running_loop() -> asyncio.AbstractEventLoop:
    """The running loop (RuntimeError without one), without a system call for the served loop.

    The loop `limitguard serve` runs on is made by loop_factory and runs in the thread that made it
    (asyncio.Runner): while it runs and the caller is in that thread, it is the running loop, since
    a thread runs one loop at a time. Any other caller asks asyncio."""
    made = _made
    if made is not None and made[1] == get_ident() and made[0].is_running():
        return made[0]
    return asyncio.get_running_loop()


def loop_factory(choice: str) -> tuple[str, LoopFactory]:
    """The loop to run on for *choice* (one of EVENT_LOOPS): its name and its factory (whose last
    loop `running_loop` knows)."""
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
            return "uvloop", _remembered(uvloop.new_event_loop)
    return "asyncio", _remembered(asyncio.new_event_loop)
