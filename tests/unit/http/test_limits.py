"""Connection and body bounds (limitguard.http.limits) over real TLS on loopback.

Deadlines are driven, not waited for: the header deadline's timer is injected and fired by the
test, and the only real timers used (aiohttp's idle timeout, the body timeout) decide outcomes that
do not depend on how fast the machine is (a connection that never sends anything, a body that never
completes). Peers are told apart by binding clients to 127.0.0.2 / 127.0.0.3 (all of 127/8 is
loopback on Linux).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest

from limitguard.certs import generate as certs
from limitguard.http.bodies import BodyBudget, BodyError
from limitguard.http.endpoint import Endpoint, add_endpoint
from limitguard.http.fast import BoundedRequestHandler
from limitguard.http.limits import LINGER_SECONDS, ServingLimits
from limitguard.http.modes import FAST, HttpMode, use_http_mode
from limitguard.http.refusals import RefusalCollector, Refusals
from limitguard.http.site import LimitedSite, limited_runner
from limitguard.http.tls import server_context
from limitguard.testing.clock import Timers
from limitguard.testing.tlsclient import connect_from

HANG_GUARD = 60.0  # ends a stuck run; never decides an outcome


@dataclass
class Served:
    port: int
    site: LimitedSite
    budget: BodyBudget
    context: ssl.SSLContext

    async def connect(self, peer: str = "127.0.0.1") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await connect_from(peer, self.port, self.context, HANG_GUARD)


def _echo_endpoint(limit: int) -> Endpoint[Any, Any]:
    return Endpoint(
        name="echo",
        decode=bytes,
        answer=lambda body: len(body),
        fail_open=lambda body: -1,
        encode=lambda body, size: b'{"size":%d}' % size,
        observe=lambda *args: None,
        rejected=lambda status: None,
        max_body_bytes=limit,
    )


@asynccontextmanager
async def served(
    cert_dir: Path,
    mode: HttpMode,
    limits: ServingLimits,
    timers: Timers | None = None,
    body_timeout: float = HANG_GUARD,
    app: web.Application | None = None,
    lingering_seconds: float = LINGER_SECONDS,
) -> AsyncIterator[Served]:
    """*app* (with /echo added), or an app of /echo alone, on a LimitedSite, served in *mode*."""
    app = web.Application() if app is None else app
    use_http_mode(app, mode)
    refusals = Refusals()
    budget = BodyBudget(limits, refusals)
    add_endpoint(app, "/echo", _echo_endpoint(1 << 20), body_timeout, budget)
    runner = limited_runner(app, limits, lingering_seconds=lingering_seconds)
    await runner.setup()
    context = server_context(cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY)
    site = LimitedSite(
        runner,
        "127.0.0.1",
        0,
        limits=limits,
        ssl_context=context,
        call_later=timers and timers.call_later,
        refusals=refusals,
    )
    await site.start()
    try:
        client = ssl.create_default_context(cafile=str(cert_dir / certs.CA_CERT))
        yield Served(site.port, site, budget, client)
    finally:
        await runner.cleanup()


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True once the server has closed the connection (EOF or reset), whatever it sent before."""
    try:
        while await asyncio.wait_for(reader.read(65536), HANG_GUARD):
            pass
    except (ConnectionError, ssl.SSLError):
        pass
    return True


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run until *condition* holds (the hang guard ends a stuck run)."""
    async with asyncio.timeout(HANG_GUARD):
        while not condition():
            await asyncio.sleep(0)


def request(body: bytes, declared: int | None = None) -> bytes:
    length = len(body) if declared is None else declared
    return b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s" % (length, body)


async def response_of(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG_GUARD)
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    return int(head.split(b" ")[1]), await reader.readexactly(length)


async def test_headers_not_finished_by_the_deadline_close_the_connection(cert_dir, http_mode):
    timers = Timers()
    async with served(
        cert_dir, http_mode, ServingLimits(header_timeout_seconds=HANG_GUARD), timers
    ) as server:
        reader, writer = await server.connect()
        writer.write(b"POST /echo HTTP/1.1\r\nHost: localhost\r\n")  # no blank line: headers unfinished
        await writer.drain()
        await until(lambda: server.site.connections.total == 1)
        assert timers.fire() == 1
        assert await closed_by_server(reader)
        assert server.site.connections.refusals.connections_timed_out == 1
        await until(lambda: server.site.connections.total == 0)
        writer.close()


async def test_a_request_whose_headers_arrived_outlives_the_deadline(cert_dir, http_mode):
    timers = Timers()
    async with served(
        cert_dir, http_mode, ServingLimits(header_timeout_seconds=HANG_GUARD), timers
    ) as server:
        reader, writer = await server.connect()
        writer.write(request(b"abc"))
        assert await response_of(reader) == (200, b'{"size":3}')
        assert timers.fire() == 0  # the deadline was cancelled when the headers ended
        # a second request on the same connection starts a new deadline at its first byte
        writer.write(b"POST /echo HTTP/1.1\r\n")
        await writer.drain()
        await until(lambda: any(not handle.cancelled() for _, handle in timers.pending))
        assert timers.fire() == 1
        assert await closed_by_server(reader)
        writer.close()


async def test_a_kept_connections_request_whose_whole_head_arrives_at_once_sets_no_deadline(
    cert_dir, http_mode
):
    """The usual request: its head in one read (a deadline set and cancelled at once costs every request)."""
    timers = Timers()
    async with served(
        cert_dir, http_mode, ServingLimits(header_timeout_seconds=HANG_GUARD), timers
    ) as server:
        reader, writer = await server.connect()
        for body in (b"a", b"bc", b"def"):
            writer.write(request(body))
            assert await response_of(reader) == (200, b'{"size":%d}' % len(body))
        assert len(timers.pending) == 1  # the connection's first: set as it was accepted
        writer.write(b"POST /echo HTTP/1.1\r\n")  # a head that does not end still gets one
        await writer.drain()
        await until(lambda: len(timers.pending) == 2)
        assert timers.fire() == 1
        assert await closed_by_server(reader)
        writer.close()


async def test_headers_split_across_writes_at_the_blank_line_are_seen_complete(cert_dir, http_mode):
    timers = Timers()
    async with served(
        cert_dir, http_mode, ServingLimits(header_timeout_seconds=HANG_GUARD), timers
    ) as server:
        reader, writer = await server.connect()
        whole = request(b"xy")
        cut = whole.index(b"\r\n\r\n") + 2
        for piece in (whole[:cut], whole[cut:]):
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0)
        assert await response_of(reader) == (200, b'{"size":2}')
        assert timers.fire() == 0
        writer.close()


async def test_an_idle_connection_is_closed_after_the_idle_timeout(cert_dir, http_mode):
    """aiohttp's keep-alive timer, set from idle_timeout_seconds: a connection that sends nothing ends."""
    timers = Timers()  # never fired: only the idle timeout can close it
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, idle_timeout_seconds=0.05)
    async with served(cert_dir, http_mode, limits, timers) as server:
        reader, writer = await server.connect()
        assert await closed_by_server(reader)
        assert server.site.connections.refusals.connections_timed_out == 0
        writer.close()


def test_the_idle_timeout_outlasts_the_clients_own():
    """Go's http.Transport drops idle connections after 90 s (net/http DefaultTransport, kept by
    k8s.io/apimachinery/pkg/util/net SetTransportDefaults for the apiserver's webhook client): the
    client closes first, so a POST never goes out on a connection the server is closing."""
    assert ServingLimits().idle_timeout_seconds > 90


async def test_connections_past_the_per_peer_cap_are_closed_and_others_still_served(cert_dir, http_mode):
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_connections_per_peer=2)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        held = [await server.connect("127.0.0.2") for _ in range(2)]
        await until(lambda: server.site.connections.total == 2)
        reader, writer = await server.connect("127.0.0.2")
        assert await closed_by_server(reader)
        assert server.site.connections.refusals.connections_refused == {"peer-share": 1, "total": 0}
        # another address is not affected by the first one's cap
        other_reader, other_writer = await server.connect("127.0.0.3")
        other_writer.write(request(b"ok"))
        assert await response_of(other_reader) == (200, b'{"size":2}')
        # a slot freed is a slot again
        held[0][1].close()
        await until(lambda: len(server.site.connections.by_peer.get("127.0.0.2", ())) == 1)
        again_reader, again_writer = await server.connect("127.0.0.2")
        again_writer.write(request(b"back"))
        assert await response_of(again_reader) == (200, b'{"size":4}')
        for connection in [
            *held[1:],
            (reader, writer),
            (other_reader, other_writer),
            (again_reader, again_writer),
        ]:
            connection[1].close()


async def test_a_full_server_displaces_the_biggest_peers_waiting_connection(cert_dir, http_mode):
    """Max-min fairness: a peer at or under its share is never locked out by one holding more."""
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_connections=3)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        hog = [await server.connect("127.0.0.2") for _ in range(3)]
        await until(lambda: server.site.connections.total == 3)
        reader, writer = await server.connect("127.0.0.3")
        writer.write(request(b"in"))
        assert await response_of(reader) == (200, b'{"size":2}')
        assert server.site.connections.refusals.connections_displaced == 1
        assert await closed_by_server(hog[0][0])  # the oldest of the biggest holder's
        # now 2 + 1: a second newcomer would hold as many as the biggest holder: refused
        await until(lambda: server.site.connections.total == 3)
        late_reader, late_writer = await server.connect("127.0.0.3")
        assert await closed_by_server(late_reader)
        assert server.site.connections.refusals.connections_refused == {"peer-share": 0, "total": 1}
        for connection in [*hog, (reader, writer), (late_reader, late_writer)]:
            connection[1].close()


async def test_a_stalled_body_gets_408_and_returns_its_bytes(cert_dir, http_mode):
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD)
    async with served(cert_dir, http_mode, limits, Timers(), body_timeout=0.05) as server:
        reader, writer = await server.connect()
        writer.write(request(b"x" * 1000, declared=100_000))  # never completes
        status, body = await response_of(reader)
        assert status == 408 and b"not received within" in body
        assert server.budget.total == 0 and server.budget.by_peer == {}
        assert await closed_by_server(reader)  # the unread rest is not waited for
        writer.close()


async def test_a_refused_body_closes_its_connection_without_lingering(cert_dir, http_mode):
    """After an answer that leaves a body unread, aiohttp reads and drops the rest for a while (the
    lingering a 413 needs): a body refused for being slow, or for want of room, is not waited for.
    With lingering far past the hang guard, only a close without it ends these in time."""
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_body_bytes_per_peer=10_000)
    async with served(
        cert_dir, http_mode, limits, Timers(), body_timeout=0.05, lingering_seconds=HANG_GUARD * 10
    ) as server:
        for declared, status in ((5_000, 408), (20_000, 503)):
            reader, writer = await server.connect()
            writer.write(request(b"x" * 100, declared=declared))  # never completes
            assert (await response_of(reader))[0] == status
            assert await closed_by_server(reader)
            writer.close()


async def test_a_body_larger_than_its_peers_share_gets_503(cert_dir, http_mode):
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_body_bytes_per_peer=10_000)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        reader, writer = await server.connect()
        writer.write(request(b"", declared=20_000)[:-4] + b"\r\n\r\n" + b"x" * 10)
        status, body = await response_of(reader)
        assert status == 503 and b"in flight from 127.0.0.1" in body
        assert server.budget.total == 0
        writer.close()


async def test_the_biggest_holder_of_body_bytes_yields_to_a_smaller_one(cert_dir, http_mode):
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_body_bytes_in_flight=100_000)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        hog = []
        for _ in range(2):  # 2 x 45,000 declared, a byte sent: 90,000 of 100,000 held
            connection = await server.connect("127.0.0.2")
            connection[1].write(request(b"x", declared=45_000))
            hog.append(connection)
        await until(lambda: server.budget.total == 90_000)
        reader, writer = await server.connect("127.0.0.3")
        writer.write(request(b"y", declared=20_000))  # needs 10,000 more than is free
        await until(lambda: server.budget.refusals.bodies_displaced == 1)
        writer.write(b"y" * 19_999)
        assert await response_of(reader) == (200, b'{"size":20000}')
        statuses = []
        for hog_reader, _ in hog:
            try:
                statuses.append((await asyncio.wait_for(response_of(hog_reader), 1))[0])
            except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                statuses.append(None)
        assert sorted(statuses, key=str) == [503, None]  # one dropped, one still waiting for its body
        assert server.budget.held_by_peer == {"127.0.0.2": 45_000}
        for connection in [*hog, (reader, writer)]:
            connection[1].close()
        await until(lambda: server.budget.total == 0)


async def test_a_chunked_body_is_counted_as_it_grows(cert_dir, http_mode):
    """Without a Content-Length the bytes are counted as they arrive: past the peer's share, 503."""
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_body_bytes_per_peer=50_000)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        reader, writer = await server.connect()
        head = b"POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        writer.write(head + b"%x\r\n%s\r\n" % (30_000, b"a" * 30_000))
        await until(lambda: server.budget.total == 30_000)
        writer.write(b"%x\r\n%s\r\n" % (30_000, b"b" * 30_000))
        status, body = await response_of(reader)
        assert status == 503 and b"in flight from 127.0.0.1" in body
        await until(lambda: server.budget.total == 0)
        # within the share, a chunked body is read whole
        again_reader, again_writer = await server.connect()
        again_writer.write(head + b"%x\r\n%s\r\n0\r\n\r\n" % (40_000, b"c" * 40_000))
        assert await response_of(again_reader) == (200, b'{"size":40000}')
        writer.close()
        again_writer.close()


async def test_a_burst_of_newcomers_displaces_one_waiting_connection_each(cert_dir, http_mode):
    """Displacement frees its slot at once, so a burst never goes past the total."""
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_connections=4)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        hog = [await server.connect("127.0.0.2") for _ in range(4)]
        await until(lambda: server.site.connections.total == 4)
        newcomers = await asyncio.gather(*(server.connect(f"127.0.0.{3 + i}") for i in range(2)))
        await until(lambda: server.site.connections.refusals.connections_displaced == 2)
        assert server.site.connections.total == 4
        assert len(server.site.connections.by_peer["127.0.0.2"]) == 2
        for connection in [*hog, *newcomers]:
            connection[1].close()


async def test_a_full_server_displaces_a_connection_receiving_a_body_when_none_waits(cert_dir, http_mode):
    """A crowd streaming slow bodies on every connection would otherwise lock a newcomer out for as
    long as it keeps streaming: its bodies are not being answered yet, so one may be dropped."""
    limits = ServingLimits(header_timeout_seconds=HANG_GUARD, max_connections=3)
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        hog = [await server.connect("127.0.0.2") for _ in range(3)]
        for _, writer in hog:
            writer.write(request(b"x", declared=1000))  # headers done, body never completes
        await until(lambda: server.budget.total == 3000)
        assert not any(handler.waiting for handler in server.site.connections.by_peer["127.0.0.2"])
        reader, writer = await server.connect("127.0.0.3")
        writer.write(request(b"in"))
        assert await response_of(reader) == (200, b'{"size":2}')
        assert server.site.connections.refusals.connections_displaced == 1
        await until(lambda: server.budget.total == 2000)  # the dropped body's bytes are returned
        for connection in [*hog, (reader, writer)]:
            connection[1].close()


async def test_refusals_are_exposed_as_counters(cert_dir, http_mode):
    limits = ServingLimits(
        header_timeout_seconds=HANG_GUARD, max_connections_per_peer=1, max_body_bytes_per_peer=100
    )
    async with served(cert_dir, http_mode, limits, Timers()) as server:
        reader, writer = await server.connect("127.0.0.2")
        writer.write(request(b"x", declared=200))  # over the address's body share: 503
        assert (await response_of(reader))[0] == 503
        _, held_writer = await server.connect("127.0.0.3")
        await until(lambda: server.site.connections.total >= 1)
        refused_reader, refused_writer = await server.connect("127.0.0.3")  # past its address's cap
        assert await closed_by_server(refused_reader)
        registry = CollectorRegistry()
        registry.register(RefusalCollector(server.site.connections.refusals))
        exposed = generate_latest(registry).decode()
        assert 'limitguard_connections_refused_total{reason="peer-share"} 1.0' in exposed
        assert 'limitguard_connections_refused_total{reason="total"} 0.0' in exposed
        assert 'limitguard_bodies_refused_total{reason="peer-share"} 1.0' in exposed
        assert "limitguard_connections_displaced_total 0.0" in exposed
        assert "limitguard_bodies_displaced_total 0.0" in exposed
        for connection_writer in (writer, held_writer, refused_writer):
            connection_writer.close()


def test_budget_accounting_returns_to_zero():
    budget = BodyBudget(ServingLimits(max_body_bytes_per_peer=100, max_body_bytes_in_flight=150))
    evicted: list[str] = []
    first = budget.open("a", lambda: evicted.append("first"))
    budget.grow(first, 90)
    budget.grow(first, 60)  # never shrinks while open
    assert budget.total == 90
    second = budget.open("a", lambda: evicted.append("second"))
    with pytest.raises(BodyError) as refused:
        budget.grow(second, 20)
    assert refused.value.status == 503 and budget.held_by_peer["a"] == 90
    small = budget.open("b", lambda: evicted.append("small"))
    budget.grow(small, 70)  # 160 > 150: "a" holds 90 > 70 wanted, so its largest body yields
    assert evicted == ["first"] and first.evicted
    assert budget.total == 70 and budget.held_by_peer == {"a": 0, "b": 70}
    budget.grow(first, 10)  # an evicted reservation holds nothing more
    assert budget.refusals.bodies_refused == {"peer-share": 1, "total": 0}
    assert budget.refusals.bodies_displaced == 1
    for reservation in (first, second, small, small):
        budget.close(reservation)
    assert (budget.total, budget.by_peer, budget.held_by_peer) == (0, {}, {})


async def test_a_body_read_resumes_reading_only_after_a_pause(cert_dir, monkeypatch):
    """aiohttp asks the protocol to resume after every body read: a body that arrived whole
    resumes nothing; a body its handler leaves unread past aiohttp's high-water mark pauses
    reading, and reading it resumes (a resume skipped there would hang the request)."""
    calls = {"pause": 0, "resume": 0}
    pause, resume = BoundedRequestHandler.pause_reading, BoundedRequestHandler._resume_transport_reading

    def counted(name: str, method: Callable[[Any], None]) -> Callable[[Any], None]:
        def call(self: Any) -> None:
            calls[name] += 1
            method(self)

        return call

    monkeypatch.setattr(BoundedRequestHandler, "pause_reading", counted("pause", pause))
    monkeypatch.setattr(BoundedRequestHandler, "_resume_transport_reading", counted("resume", resume))
    release = asyncio.Event()

    async def read_later(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text=str(len(await request.read())))

    app = web.Application()
    app.router.add_post("/later", read_later)
    async with served(cert_dir, FAST, ServingLimits(), app=app) as server:
        reader, writer = await server.connect()
        for body in (b"a", b"bc"):
            writer.write(request(body))
            assert await response_of(reader) == (200, b'{"size":%d}' % len(body))
        assert calls == {"pause": 0, "resume": 0}
        large = b"x" * (900 * 1024)
        writer.write(b"POST /later HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % len(large))
        writer.write(large)
        await until(lambda: calls["pause"] > 0)  # the unread body filled aiohttp's buffer
        release.set()
        assert await response_of(reader) == (200, str(len(large)).encode())
        assert calls["resume"] > 0
        writer.close()


def test_the_connection_protocol_is_aiohttps_with_its_request_loop_state():
    """BoundedRequestHandler reads aiohttp's `_waiter` and sets `_lingering_time` (pinned aiohttp):
    fail loudly if either goes."""
    aiohttps = next(base for base in BoundedRequestHandler.__mro__ if base.__name__ == "RequestHandler")
    assert {"_waiter", "_lingering_time"} <= set(aiohttps.__slots__)
