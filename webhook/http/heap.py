"""Freed memory handed back to the system (glibc), so an attack's height does not stay resident.

Thousands of closed TLS connections or a stalled 4 MiB body are freed by Python, but glibc keeps the
pages: inside its heap between live allocations, and, once a large block was freed, it serves the
next large ones from the heap too (its mmap threshold rises with each). Both are switched here; on
other C libraries these do nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable


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
MMAP_FROM_BYTES = 128 * 1024  # glibc's initial threshold, kept from moving


def keep_large_blocks_apart() -> None:
    """Every allocation of 128 KiB or more gets its own mapping, returned to the system when freed.

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
        mallopt(M_MMAP_THRESHOLD, MMAP_FROM_BYTES)


def soon(callback: Callable[[], None]) -> None:
    """*callback* on the next loop turn, after what the current one frees; at once without a loop."""
    try:
        asyncio.get_running_loop().call_soon(callback)
    except RuntimeError:  # no loop (a direct caller): now
        callback()


def release_freed_memory() -> None:
    """Hand the C heap's free pages back to the system.

    What thousands of closed TLS connections or a stalled 4 MiB body held is freed, but glibc keeps
    free pages inside its heap between live allocations: RSS would stay at the attack's height
    (220 MB after 5,000 slow-header sockets had all been closed). malloc_trim(0) returns them; it
    walks the whole heap, so it runs only after much was freed."""
    if _TRIM is not None:
        _TRIM()
