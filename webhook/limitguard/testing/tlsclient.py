"""A TLS client connection from a chosen loopback address: how tests and benchmarks act as many pods.

All of 127/8 is loopback on Linux, so binding the client's end to 127.0.0.2, 127.0.0.3, ... gives the
server as many distinct peer addresses.
"""

from __future__ import annotations

import asyncio
import ssl


async def connect_from(
    peer: str, port: int, context: ssl.SSLContext, timeout: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TLS connection to 127.0.0.1:*port* (name "localhost") whose client end is bound to *peer*."""
    return await asyncio.wait_for(
        asyncio.open_connection(
            "127.0.0.1", port, ssl=context, server_hostname="localhost", local_addr=(peer, 0)
        ),
        timeout,
    )
