"""The connections any client on the pod network can open: many at once, from many loopback addresses,
sending slowly; and one good request among them, as the apiserver's would be."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable

from bench.procstat import rss_mb
from limitguard.http.limits import ServingLimits
from limitguard.testing.tlsclient import connect_from

HEADERS_END = b"\r\n\r\n"


class Attack:
    """Connections from many loopback addresses to one server."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.port, self.context = port, context
        self.writers: list[asyncio.StreamWriter] = []
        self.failed = 0

    async def connect(self, peer: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            reader, writer = await connect_from(peer, self.port, self.context, 30)
        except (OSError, TimeoutError, ssl.SSLError):
            self.failed += 1
            return None
        self.writers.append(writer)
        return reader, writer

    async def open_many(self, count: int, peers: int, first_bytes: Callable[[int], bytes]) -> None:
        semaphore = asyncio.Semaphore(200)

        async def one(index: int) -> None:
            async with semaphore:
                connection = await self.connect(f"127.0.0.{2 + index % peers}")
                if connection is not None:
                    with contextlib.suppress(OSError):
                        connection[1].write(first_bytes(index))
                        await asyncio.wait_for(connection[1].drain(), 30)

        await asyncio.gather(*(one(index) for index in range(count)))

    def close(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()


async def good_request(port: int, context: ssl.SSLContext, body: bytes, path: str = "/validate") -> int:
    """One request from 127.0.0.1 (the apiserver's address here): its HTTP status, 0 if none."""
    attack = Attack(port, context)
    connection = await attack.connect("127.0.0.1")
    if connection is None:
        return 0
    reader, writer = connection
    writer.write(
        b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        % (path.encode(), len(body), body)
    )
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        return int(head.split(b" ")[1])
    except (OSError, TimeoutError, asyncio.IncompleteReadError):
        return 0
    finally:
        attack.close()


def post_head(path: str, length: int) -> bytes:
    return (
        b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % (path.encode(), length)
    )


LIMITS = ServingLimits()  # the server runs with its defaults


CROWD = LIMITS.max_connections  # every connection the server keeps


CROWD_PEERS = 8  # each address within its share of connections and of body bytes


# all of them together fill the body bytes in flight exactly
CROWD_BODY = LIMITS.max_body_bytes_in_flight // CROWD


TRICKLE_SECONDS = 8.0  # each phase ends before its 10 s deadline


TRICKLE_PIECES = 8


class Crowd:
    """CROWD TLS connections, each sending its headers, then its body, a piece a second."""

    def __init__(self, port: int, context: ssl.SSLContext, body: bytes) -> None:
        self.attack = Attack(port, context)
        self.head = post_head("/validate", len(body))
        self.body = body
        self.phase = {"headers": 0, "body": 0, "answered": 0}
        self.statuses: dict[int, int] = {}

    async def trickle(self, writer: asyncio.StreamWriter, data: bytes, seconds: float) -> None:
        piece = -(-len(data) // TRICKLE_PIECES)
        for offset in range(0, len(data), piece):
            writer.write(data[offset : offset + piece])
            await writer.drain()
            await asyncio.sleep(seconds / TRICKLE_PIECES)

    async def one(
        self, index: int, handshakes: asyncio.Semaphore, header_seconds: float = TRICKLE_SECONDS
    ) -> None:
        async with handshakes:
            connection = await self.attack.connect(f"127.0.0.{2 + index % CROWD_PEERS}")
        if connection is None:
            return
        reader, writer = connection
        status = 0
        try:
            self.phase["headers"] += 1
            await self.trickle(writer, self.head, header_seconds)
            self.phase["headers"] -= 1
            self.phase["body"] += 1
            await self.trickle(writer, self.body, TRICKLE_SECONDS)
            self.phase["body"] -= 1
            head = await asyncio.wait_for(reader.readuntil(HEADERS_END), 30)
            status = int(head.split(b" ")[1])
            self.phase["answered"] += 1
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        self.statuses[status] = self.statuses.get(status, 0) + 1

    async def plateau(self, name: str) -> None:
        """Until the count in phase *name* has stopped growing for a second (all are in it)."""
        best, still = -1, 0
        while still < 4 or best <= 0:
            await asyncio.sleep(0.25)
            now = self.phase[name]
            best, still = (now, 0) if now > best else (best, still + 1)

    async def phase_height(self, name: str, pid: int) -> tuple[float, int]:
        """The highest RSS and count while phase *name* lasts (until a tenth have left it)."""
        best, mb = -1, 0.0
        while True:
            now = self.phase[name]
            best, mb = max(best, now), max(mb, rss_mb(pid))
            if best > 0 and now < best * 0.9:
                return mb, best
            await asyncio.sleep(0.25)
