"""Freed large blocks go back to the system (limitguard.http.heap), measured as the process's VmRSS;
smaller ones, a request's among them, stay in the heap; one trim per loop turn."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from limitguard.http import heap
from limitguard.http.bodies import TRIM_FROM_BODY_BYTES
from limitguard.http.limits import TRIM_EVERY_CLOSED, PeerConnections, ServingLimits
from limitguard.http.modes import HttpMode
from tests.unit.http.test_limits import (
    HANG_GUARD,
    Timers,
    closed_by_server,
    request,
    response_of,
    served,
    until,
)

STATUS = Path("/proc/self/status")

# Run in a fresh interpreter: glibc serves even a large block from a free chunk of its heap when
# one fits, and a test process that ran servers before has such chunks (a server pins the
# threshold at start, after its own start-up).
PRELUDE = """
from pathlib import Path
from limitguard.http.heap import LARGE_BLOCK_BYTES, keep_large_blocks_apart

def rss_bytes():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

def heap_range():
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.endswith("[heap]"):
            start, end = (int(bound, 16) for bound in line.split()[0].split("-"))
            return range(start, end)

keep_large_blocks_apart()
"""


def run_fresh(code: str) -> list[str]:
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout.split()


@pytest.mark.skipif(not STATUS.exists(), reason="needs /proc")
def test_a_freed_large_block_leaves_the_resident_set_even_after_an_earlier_one():
    """glibc alone would serve the second block from its heap (its mmap threshold rose when the
    first was freed) and keep its pages; with the threshold pinned each block is its own mapping."""
    returned = run_fresh(
        """
        live = []
        for _ in range(3):
            block = bytearray(16 * 1024 * 1024)  # zero-filled: every page touched
            live.append([bytes(100) for _ in range(2000)])  # small objects allocated after it stay live
            held = rss_bytes()
            del block
            print(held - rss_bytes())
        """
    )
    # without the pinned threshold the second and third blocks stayed resident here (0 MB returned)
    assert all(int(size) > 8 * 1024 * 1024 for size in returned) and len(returned) == 3


@pytest.mark.skipif(not STATUS.exists(), reason="needs /proc")
def test_a_requests_blocks_come_from_the_heap_and_a_large_block_gets_its_own_mapping():
    """orjson's parse of 5,000 candidate names (a 65 KB body) takes 790 KB of scratch: from the heap
    it is reused, as its own mapping it cost an mmap and munmap and fresh pages a request."""
    placed = run_fresh(
        """
        scratch = bytes(790_528)  # what strace showed orjson.loads map for that body
        large = bytes(LARGE_BLOCK_BYTES)
        print(id(scratch) in heap_range(), id(large) in heap_range())
        """
    )
    assert placed == ["True", "False"]


def count_trims(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    trims: list[None] = []
    monkeypatch.setattr(heap, "_TRIM", lambda: trims.append(None))  # glibc's malloc_trim, counted
    return trims


def test_closed_and_refused_connections_alike_count_toward_a_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each connection, kept or refused at once, did a TLS handshake and held its TLS state in the
    heap: a trim follows every TRIM_EVERY_CLOSED of them (no loop: at once)."""
    trims = count_trims(monkeypatch)
    connections = PeerConnections(ServingLimits(max_connections_per_peer=2))
    peer = "10.0.0.1"
    admit = connections.admit  # the handlers are only dictionary keys here
    assert admit(object(), peer)  # type: ignore[arg-type]  # stays open: no early trim at zero
    closed = TRIM_EVERY_CLOSED // 2
    for _ in range(closed):
        handler = object()
        assert admit(handler, peer)  # type: ignore[arg-type]
        connections.release(handler, peer)  # type: ignore[arg-type]
    assert admit(object(), peer)  # type: ignore[arg-type]  # the address's share is now full
    refusals = [admit(object(), peer) for _ in range(TRIM_EVERY_CLOSED - closed - 1)]  # type: ignore[arg-type]
    assert not any(refusals) and trims == []
    assert not admit(object(), peer)  # type: ignore[arg-type]  # the TRIM_EVERY_CLOSED-th
    assert len(trims) == 1


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


@pytest.mark.parametrize(("declared", "trimmed"), [(TRIM_FROM_BODY_BYTES, 1), (TRIM_FROM_BODY_BYTES - 1, 0)])
async def test_a_connection_refused_a_large_body_trims_once_it_is_closed(
    cert_dir: Path, http_mode: HttpMode, monkeypatch: pytest.MonkeyPatch, declared: int, trimmed: int
) -> None:
    """What arrived of a refused large body is freed only when its connection closes: trim then."""
    trims = count_trims(monkeypatch)
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_body_bytes_per_peer=10_000)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        reader, writer = await server.connect()
        writer.write(request(b"x" * 10, declared=declared))
        status, _ = await response_of(reader)
        assert status == 503  # over the peer's share, refused before its body is read
        assert trims == []  # the connection still holds what arrived
        assert await closed_by_server(reader)
        connections = server.site.connections
        await until(lambda: connections.total == 0)
        await asyncio.sleep(0)  # the turn a trim would be scheduled for
        assert len(trims) == trimmed
        writer.close()
