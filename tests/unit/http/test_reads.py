"""BufferedReads hands the request handler a copy of each read, so the shared buffer may be reused."""

from __future__ import annotations

import asyncio

import pytest

from limitguard.http import heap
from limitguard.http.reads import LARGE_READ_BYTES, BufferedReads, SharedReadBuffer


class Recorder(asyncio.Protocol):
    def __init__(self) -> None:
        self.events: list[object] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.events.append(("made", transport))

    def data_received(self, data: bytes) -> None:
        self.events.append(data)

    def eof_received(self) -> bool:
        self.events.append("eof")
        return False

    def pause_writing(self) -> None:
        self.events.append("pause")

    def resume_writing(self) -> None:
        self.events.append("resume")

    def connection_lost(self, exc: Exception | None) -> None:
        self.events.append(("lost", exc))


def fill(reads: BufferedReads, data: bytes) -> None:
    """What a transport does: ask for the buffer, write into it, report how much."""
    buffer = reads.get_buffer(len(data))
    buffer[: len(data)] = data
    reads.buffer_updated(len(data))


def test_each_read_reaches_the_handler_as_its_own_bytes() -> None:
    shared = SharedReadBuffer(16)
    first, second = Recorder(), Recorder()
    reads_one, reads_two = BufferedReads(first, shared), BufferedReads(second, shared)
    fill(reads_one, b"POST /a")
    fill(reads_two, b"GET /bb")  # the same buffer, overwritten
    fill(reads_one, b"xy")
    assert first.events == [b"POST /a", b"xy"]
    assert second.events == [b"GET /bb"]
    assert all(type(event) is bytes for event in first.events + second.events)


def test_everything_but_the_reads_is_passed_on() -> None:
    handler = Recorder()
    reads = BufferedReads(handler, SharedReadBuffer(8))
    transport = asyncio.Transport()
    error = ConnectionResetError()
    reads.connection_made(transport)
    reads.pause_writing()
    reads.resume_writing()
    assert reads.eof_received() is False
    reads.connection_lost(error)
    assert handler.events == [("made", transport), "pause", "resume", "eof", ("lost", error)]


heap.keep_large_blocks_apart()  # as every server does at start


@pytest.mark.skipif(heap.mmap_threshold() == 0, reason="the C library is not glibc")
def test_the_tls_layers_lookup_of_get_buffer_ends_the_connection_threshold() -> None:
    """The TLS layer looks get_buffer up as it wraps the protocol, right after allocating its own
    256 KiB buffer (mapped apart): from then on blocks up to LARGE_BLOCK_BYTES come from the heap
    again; connection_made does the same in case a TLS layer never looked it up."""
    reads = BufferedReads(Recorder(), SharedReadBuffer(8))
    heap.map_io_blocks()
    assert heap.mmap_threshold() == heap.IO_BLOCK_BYTES
    assert hasattr(reads, "get_buffer")  # what both loops' sslproto ask first
    assert heap.mmap_threshold() == heap.LARGE_BLOCK_BYTES
    heap.map_io_blocks()
    reads.connection_made(asyncio.Transport())
    assert heap.mmap_threshold() == heap.LARGE_BLOCK_BYTES


class ThresholdRecorder(Recorder):
    """Records the heap's mmap threshold each read arrives under; fails on a marked read."""

    def data_received(self, data: bytes) -> None:
        self.events.append((len(data), heap.mmap_threshold()))
        if data.startswith(b"fail"):
            raise ValueError("the handler failed")


@pytest.mark.skipif(heap.mmap_threshold() == 0, reason="the C library is not glibc")
def test_only_a_large_reads_copies_are_mapped_apart() -> None:
    """A read of LARGE_READ_BYTES or more (a body streaming in) is handed on with blocks from
    IO_BLOCK_BYTES mapped apart, so its copies leave no holes in the heap; every smaller read, and
    anything after either, meets the usual threshold, even when the handler raised."""
    handler = ThresholdRecorder()
    reads = BufferedReads(handler, SharedReadBuffer(LARGE_READ_BYTES))
    fill(reads, b"x" * (LARGE_READ_BYTES - 1))
    fill(reads, b"x" * LARGE_READ_BYTES)
    with pytest.raises(ValueError, match="failed"):
        fill(reads, b"fail".ljust(LARGE_READ_BYTES))
    assert handler.events == [
        (LARGE_READ_BYTES - 1, heap.LARGE_BLOCK_BYTES),
        (LARGE_READ_BYTES, heap.IO_BLOCK_BYTES),
        (LARGE_READ_BYTES, heap.IO_BLOCK_BYTES),
    ]
    assert heap.mmap_threshold() == heap.LARGE_BLOCK_BYTES
