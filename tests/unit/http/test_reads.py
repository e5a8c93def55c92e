"""BufferedReads hands the request handler a copy of each read, so the shared buffer may be reused."""

from __future__ import annotations

import asyncio

from limitguard.http.reads import BufferedReads, SharedReadBuffer


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
