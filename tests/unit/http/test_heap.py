"""Freed large blocks go back to the system (limitguard.http.heap), measured as the process's VmRSS;
smaller ones, the TLS layer's read buffer among them, stay in the heap; one trim per loop turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from limitguard.http import heap
from limitguard.http.heap import LARGE_BLOCK_BYTES, keep_large_blocks_apart

STATUS = Path("/proc/self/status")
BLOCK = 16 * 1024 * 1024


def rss_bytes() -> int:
    for line in STATUS.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not STATUS.exists(), reason="needs /proc")
def test_a_freed_large_block_leaves_the_resident_set_even_after_an_earlier_one():
    """glibc alone would serve the second block from its heap (its mmap threshold rose when the
    first was freed) and keep its pages; with the threshold pinned each block is its own mapping."""
    keep_large_blocks_apart()
    live = []
    for _ in range(3):
        block = bytearray(BLOCK)  # zero-filled: every page touched
        live.append([bytes(100) for _ in range(2000)])  # small objects allocated after it stay live
        held = rss_bytes()
        del block
        assert held - rss_bytes() > BLOCK // 2
    # without the pinned threshold the second and third blocks stayed resident here (0 MB returned)


def heap_range() -> range:
    """The addresses of the process's [heap] (glibc's main arena)."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.endswith("[heap]"):
            start, end = (int(bound, 16) for bound in line.split()[0].split("-"))
            return range(start, end)
    raise AssertionError("no [heap] mapping")


@pytest.mark.skipif(not STATUS.exists(), reason="needs /proc")
def test_a_tls_read_buffer_comes_from_the_heap_and_a_large_block_gets_its_own_mapping():
    """The TLS layer reads every record into a 256 KiB bytes object: from the heap it is reused, as
    its own mapping it cost an mmap, mremap and munmap per request (bench/syscalls.py)."""
    keep_large_blocks_apart()
    read_buffer = bytes(256 * 1024)
    large = bytes(LARGE_BLOCK_BYTES)
    heap = heap_range()
    assert id(read_buffer) in heap
    assert id(large) not in heap


def count_trims(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    trims: list[None] = []
    monkeypatch.setattr(heap, "_TRIM", lambda: trims.append(None))  # glibc's malloc_trim, counted
    return trims


def test_large_frees_in_one_loop_turn_trim_once_on_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    trims = count_trims(monkeypatch)
    seen: list[int] = []

    async def free_a_body_and_its_answer() -> None:
        heap.release_freed_memory_soon()  # the body budget's reservation closed
        heap.release_freed_memory_soon()  # the endpoint answered a large body
        seen.append(len(trims))  # not yet: what this turn frees is still held
        await asyncio.sleep(0)
        seen.append(len(trims))
        heap.release_freed_memory_soon()  # a later turn trims again
        await asyncio.sleep(0)
        seen.append(len(trims))

    asyncio.run(free_a_body_and_its_answer())
    assert seen == [0, 1, 2]


def test_a_trim_left_pending_by_a_closed_loop_does_not_stop_the_next_loops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trims = count_trims(monkeypatch)

    loop = asyncio.new_event_loop()
    loop.call_soon(heap.release_freed_memory_soon)
    loop.call_soon(loop.stop)  # the turn the trim was scheduled for never comes
    loop.run_forever()
    loop.close()
    assert trims == []

    async def ask_and_wait() -> None:
        heap.release_freed_memory_soon()
        await asyncio.sleep(0)

    asyncio.run(ask_and_wait())
    assert len(trims) == 1
    heap.release_freed_memory_soon()  # no loop: at once
    assert len(trims) == 2
