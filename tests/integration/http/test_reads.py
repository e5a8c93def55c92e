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
from tests.integration.http.wire import open_tls, read_answer
from tests.support import binding


def request(body: bytes) -> bytes:
    head = b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    return head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


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
    reader, writer = await open_tls(server.url, cert_dir)
    sent = request(orjson.dumps(binding("pod5", "node1", uid="r-1")))
    writer.write(sent)
    _, _, review = await read_answer(reader)
    writer.close()
    assert review["response"]["uid"] == "r-1"
    assert review["response"]["allowed"] is False  # decided: node1 is full by limits
    assert sum(reads_seen) == len(sent)  # every byte of the request came through the buffer


async def test_bodies_longer_than_the_buffer_arrive_intact_from_connections_at_once(
    start_server, cert_dir, reads_seen
) -> None:
    server = await start_server(worked_example(), config())
    # JSON allows whitespace between tokens: each body spans several buffers and differs in its uid
    bodies = [
        orjson.dumps(binding("pod5", node, uid=f"big-{index}"))[:-1]
        + b" " * (READ_BUFFER_BYTES * 2 + index)
        + b"}"
        for index, node in enumerate(("node1", "node2", "node1"))
    ]
    connections = [await open_tls(server.url, cert_dir) for _ in bodies]
    for (_, writer), body in zip(connections, bodies, strict=True):
        writer.write(request(body))
    answers = [review for _, _, review in await asyncio.gather(*(read_answer(r) for r, _ in connections))]
    for _, writer in connections:
        writer.close()
    assert [answer["response"]["uid"] for answer in answers] == ["big-0", "big-1", "big-2"]
    assert [answer["response"]["allowed"] for answer in answers] == [False, True, False]
    assert max(reads_seen) <= READ_BUFFER_BYTES
    assert sum(reads_seen) == sum(len(request(body)) for body in bodies)
