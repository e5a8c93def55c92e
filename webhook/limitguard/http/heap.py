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

Some blocks between the two sizes are a connection's I/O rather than a request's work, and their
number is the clients' to choose: the TLS layer's 256 KiB ciphertext buffer (uvloop mallocs one per
connection, asyncio allocates a bytearray), and the copies of a read of 128 KiB or more (a body
streaming in). From the heap, thousands of connections or a flood of refused bodies left them
strewn between live objects. So while a TLS connection is being set up, and while a large read is
handed on, the threshold is IO_BLOCK_BYTES: those blocks get mappings of their own, returned when
freed (limitguard.http.reads).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
from collections.abc import Callable

from limitguard.http.eventloop import running_loop


def _glibc(function: str, *argtypes: type) -> Callable[..., int] | None:
    """The C library's *function* taking *argtypes* and returning an int, or None where the C
    library has none (glibc's malloc_trim and mallopt)."""
    name = ctypes.util.find_library("c")
    try:
        found = getattr(ctypes.CDLL(name), function) if name else None
    except (OSError, AttributeError):
        return None
    if found is not None:
        found.argtypes, found.restype = list(argtypes), ctypes.c_int
    return found


_MALLOC_TRIM = _glibc("malloc_trim", ctypes.c_size_t)
_MALLOPT = _glibc("mallopt", ctypes.c_int, ctypes.c_int)
_TRIM = functools.partial(_MALLOC_TRIM, 0) if _MALLOC_TRIM is not None else None  # malloc_trim(0)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK_BYTES = 1 << 20  # above a request's blocks (an 85 KB body's parse), and kept from moving
IO_BLOCK_BYTES = 128 * 1024  # below the TLS layer's 256 KiB buffer, at a large read's copies
_threshold = 0  # the mmap threshold last set here (0: glibc's own, which moves)


def _set_mmap_threshold(size: int) -> None:
    global _threshold
    if size != _threshold and _MALLOPT is not None:
        _MALLOPT(M_MMAP_THRESHOLD, size)
        _threshold = size


def mmap_threshold() -> int:
    """The threshold last set here: 0 before any, or where the C library is not glibc."""
    return _threshold


def keep_large_blocks_apart() -> None:
    """Every allocation of LARGE_BLOCK_BYTES or more gets its own mapping, returned when freed.

    glibc raises this threshold to the size of each large block freed (up to 32 MiB): after one 4 MiB
    body, the next ones grow inside the heap, copied on each resize and stranded between live
    objects when freed (32 stalled 4 MiB bodies held 7 MB each). Setting it stops that. Cheap when
    it is already set: it ends each `map_io_blocks`."""
    _set_mmap_threshold(LARGE_BLOCK_BYTES)


def map_io_blocks() -> None:
    """Until `keep_large_blocks_apart` is called again, blocks from IO_BLOCK_BYTES get their own
    mapping: around what a connection's I/O allocates (limitguard.http.reads)."""
    _set_mmap_threshold(IO_BLOCK_BYTES)


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
