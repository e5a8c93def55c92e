"""Talking to a running limitguard over TLS at the byte level: a connection, and one answer read off it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from limitguard.testing.server import client_context
from tests.support import HANG_GUARD_SECONDS


async def open_tls(url: str, cert_dir: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the server at *url* (https://127.0.0.1:PORT), verifying its certificate."""
    port = int(url.rsplit(":", 1)[1])
    return await asyncio.open_connection(
        "127.0.0.1", port, ssl=client_context(cert_dir), server_hostname="localhost"
    )


async def read_answer(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str], dict]:
    """One answer: its status line, its headers (lower-case names) and its JSON body."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG_GUARD_SECONDS)
    status, *lines = head[:-4].split(b"\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.decode().partition(":")
        assert name.lower() not in headers, f"{name} twice"
        headers[name.lower()] = value.strip()
    body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), HANG_GUARD_SECONDS)
    return status, headers, orjson.loads(body)
