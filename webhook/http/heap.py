"""Freed memory handed back to the system (glibc), so an attack's height does not stay resident.

Thousands of closed TLS connections or a stalled 4 MiB body are freed by Python, but glibc keeps the
pages: inside its heap between live allocations, and, once a large block was freed, it serves the
next large ones from the heap too (its mmap threshold rises with each). Both are switched here; on
other C libraries these do nothing.

What counts as large is one size, LARGE_BLOCK_BYTES: blocks from it on get their own mapping, and a
request body from it on is followed by a trim (limitguard.http.limits), so no body size is neither.
A request's blocks stay below it and come from the heap: orjson's parse takes about twelve times
the body as scratch (790 KB for 5,000 candidate names), and as a mapping of its own it cost an
mmap, a munmap and fresh zeroed pages a request (30-60 us more for that 65 KB parse). The TLS
layer's plaintext no longer arrives in a 256 KiB block a read (limitguard.http.reads).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable

from limitguard.http.eventloop import running_loop


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's malloc_trim(0), or None on other C libraries."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is None:
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


_TRIM = _malloc_trim()


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK_BYTES = 1 << 20  # above a request's blocks (an 85 KB body's parse), and kept from moving


def keep_large_blocks_apart() -> None:
    """Every allocation of LARGE_BLOCK_BYTES or more gets its own mapping, returned when freed.

    glibc raises this threshold to the size of each large block freed (up to 32 MiB): after one 4 MiB
    body, the next ones grow inside the heap, copied on each resize and stranded between live
    objects when freed (32 stalled 4 MiB bodies held 7 MB each). Setting it once stops that."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        return
    if mallopt is not None:
        mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES)


_trim_pending_on: asyncio.AbstractEventLoop | None = None  # the loop a trim is scheduled on


def _trim_now() -> None:
    global _trim_pending_on
    _trim_pending_on = None
    release_freed_memory()


def release_freed_memory_soon() -> None:
    """`release_freed_memory` on the next loop turn, after what the current one frees; at once
    without a loop. One trim however many large frees ask in a turn (a body's read and its answer
    both do): each trim walks the whole heap."""
    global _trim_pending_on
    try:
        loop = running_loop()
    except RuntimeError:  # no loop (a direct caller): now
        release_freed_memory()
        return
    if _trim_pending_on is not loop:  # a loop closed with a trim pending runs no more turns
        _trim_pending_on = loop
        loop.call_soon(_trim_now)


def release_freed_memory() -> None:
    """Hand the C heap's free pages back to the system.

    What thousands of closed TLS connections or a stalled 4 MiB body held is freed, but glibc keeps
    free pages inside its heap between live allocations: RSS would stay at the attack's height
    (220 MB after 5,000 slow-header sockets had all been closed). malloc_trim(0) returns them; it
    walks the whole heap, so it runs only after much was freed."""
    if _TRIM is not None:
        _TRIM()
