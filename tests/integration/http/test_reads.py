"""A connection's TLS records are read into its listener's buffer (limitguard.http.reads), on both loops.

The TLS layer takes that path only for a protocol it recognises as buffered; otherwise it allocates
256 KiB a read again (docs/benchmarks.md). These tests watch `buffer_updated` while real requests go
over TLS, and send a body several buffers long from two connections at once, so a copy taken too
late (a view of the shared buffer) would hand aiohttp another read's bytes.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest
from limitguard.http.reads import READ_BUFFER_BYTES, BufferedReads
from limitguard.testing.examples import config, worked_example
from limitguard.testing.server import client_context

from tests.support import HANG_GUARD_SECONDS, binding


def request(body: bytes) -> bytes:
    head = b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    return head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


async def read_answer(reader: asyncio.StreamReader) -> dict:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG_GUARD_SECONDS)
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return orjson.loads(await asyncio.wait_for(reader.readexactly(length), HANG_GUARD_SECONDS))


@pytest.fixture
def reads_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The byte counts the TLS layer reported to BufferedReads, in order."""
    seen: list[int] = []
    forward = BufferedReads.buffer_updated

    def counted(self: BufferedReads, nbytes: int) -> None:
        seen.append(nbytes)
        forward(self, nbytes)

    monkeypatch.setattr(BufferedReads, "buffer_updated", counted)
    return seen


async def test_tls_records_go_into_the_listeners_buffer(start_server, cert_dir, reads_seen) -> None:
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=client_context(cert_dir), server_hostname="localhost"
    )
    sent = request(orjson.dumps(binding("pod5", "node1", uid="r-1")))
    writer.write(sent)
    review = await read_answer(reader)
    writer.close()
    assert review["response"]["uid"] == "r-1"
    assert review["response"]["allowed"] is False  # decided: node1 is full by limits
    assert sum(reads_seen) == len(sent)  # every byte of the request came through the buffer


async def test_bodies_longer_than_the_buffer_arrive_intact_from_connections_at_once(
    start_server, cert_dir, reads_seen
) -> None:
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])
    # JSON allows whitespace between tokens: each body spans several buffers and differs in its uid
    bodies = [
        orjson.dumps(binding("pod5", node, uid=f"big-{index}"))[:-1]
        + b" " * (READ_BUFFER_BYTES * 2 + index)
        + b"}"
        for index, node in enumerate(("node1", "node2", "node1"))
    ]
    connections = [
        await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_context(cert_dir), server_hostname="localhost"
        )
        for _ in bodies
    ]
    for (_, writer), body in zip(connections, bodies, strict=True):
        writer.write(request(body))
    answers = await asyncio.gather(*(read_answer(reader) for reader, _ in connections))
    for _, writer in connections:
        writer.close()
    assert [answer["response"]["uid"] for answer in answers] == ["big-0", "big-1", "big-2"]
    assert [answer["response"]["allowed"] for answer in answers] == [False, True, False]
    assert max(reads_seen) <= READ_BUFFER_BYTES
    assert sum(reads_seen) == sum(len(request(body)) for body in bodies)
