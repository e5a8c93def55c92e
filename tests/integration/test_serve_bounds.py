"""`limitguard serve` applies its connection and body limits (flags -> http.limits) on the real server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ssl
from pathlib import Path

from prometheus_client import generate_latest

from limitguard.certs import generate as certs
from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import serving_limits, start_serve
from limitguard.http.app import DEFAULT_MAX_BODY_BYTES
from limitguard.http.limits import ServingLimits
from limitguard.http.modes import HttpMode
from limitguard.http.site import LimitedSite

REPO = Path(__file__).resolve().parents[2]
DEMO_CLUSTER = REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml"
HANG_GUARD = 60.0


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["--cluster", str(DEMO_CLUSTER), *flags])


def test_the_defaults_are_the_limits_and_no_flag_shadows_another():
    args = parse()
    assert serving_limits(args) == ServingLimits()
    assert args.max_body_bytes == DEFAULT_MAX_BODY_BYTES  # the admission route's own cap stays apart


def test_each_flag_reaches_its_limit():
    args = parse(
        *("--header-timeout", "3", "--idle-timeout", "200", "--max-connections", "10"),
        *("--max-connections-per-peer", "2", "--max-body-bytes-per-peer", "1000"),
        *("--max-body-bytes-in-flight", "5000", "--max-body-bytes", "777"),
    )
    assert serving_limits(args) == ServingLimits(3.0, 200.0, 2, 10, 1000, 5000)
    assert args.max_body_bytes == 777


async def test_serve_closes_a_connection_past_its_peers_cap(tmp_path, http_mode: HttpMode):
    args = parse(
        *("--cert-dir", str(tmp_path / "certs"), "--host", "127.0.0.1", "--port", "0"),
        *("--max-connections-per-peer", "1", "--http-mode", http_mode.name),
    )
    running = await start_serve(args, {})
    try:
        context = ssl.create_default_context(cafile=str(tmp_path / "certs" / certs.CA_CERT))
        sites = [site for site in running.runner.sites if isinstance(site, LimitedSite)]
        assert len(sites) == 1
        connections = sites[0].connections

        async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            return await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", running.port, ssl=context, server_hostname="localhost"),
                HANG_GUARD,
            )

        first_reader, first_writer = await connect()
        async with asyncio.timeout(HANG_GUARD):
            while connections.total < 1:
                await asyncio.sleep(0)
        second_reader, second_writer = await connect()
        with contextlib.suppress(ConnectionError, ssl.SSLError):  # closed before any request
            assert await asyncio.wait_for(second_reader.read(), HANG_GUARD) == b""
        assert connections.refusals.connections_refused["peer-share"] == 1
        exposed = generate_latest(running.services.metrics.registry).decode()  # what /metrics serves
        assert 'limitguard_connections_refused_total{reason="peer-share"} 1.0' in exposed
        first_writer.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        head = await asyncio.wait_for(first_reader.readuntil(b"\r\n\r\n"), HANG_GUARD)
        assert head.startswith(b"HTTP/1.1 200")
        first_writer.close()
        second_writer.close()
    finally:
        await running.stop()
