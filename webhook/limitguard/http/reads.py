"""What a connection receives, read into one buffer per listener instead of a new one per read.

The TLS layer (uvloop's and asyncio's sslproto alike) hands a plain asyncio.Protocol each read as a
new bytes object: it allocates 256 KiB for every record it decrypts and shrinks it to what arrived,
churning the C heap (limitguard.http.heap keeps blocks of that size in it). A BufferedProtocol
instead gets the plaintext decrypted into a buffer it supplies. aiohttp's request handler is an
asyncio.Protocol, which the TLS layer never asks for a buffer, so `BufferedReads` stands in front
of it: the records go into the listener's buffer and the handler receives a copy of just the bytes
that arrived, as before. Under 5,000 slow-header connections the server held 1-2% less.

One buffer serves all of a listener's connections: every transport asks for it, fills it and calls
`buffer_updated` within one callback, and the bytes are copied out before that returns.

Two kinds of block here are a connection's, not a request's, and limitguard.http.heap gives them
mappings of their own (`map_io_blocks`), so that they leave nothing behind in the heap:
- the TLS layer's own ciphertext buffer, 256 KiB a connection, allocated as it wraps this protocol.
  The listener lowers the heap's threshold as it accepts a TLS connection; `get_buffer`, which the
  TLS layer looks up right after allocating its buffer (both loops do), sets it back.
- a read of LARGE_READ_BYTES or more (a body streaming in, or a flood of them): our copy and the
  parser's copy of its body bytes. Smaller reads, every usual request's, stay on the heap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from limitguard.http.heap import IO_BLOCK_BYTES, keep_large_blocks_apart, map_io_blocks

READ_BUFFER_BYTES = 256 * 1024  # what the TLS layer reads at once (its own per-read size)
LARGE_READ_BYTES = IO_BLOCK_BYTES  # from this size on, a read's copies are mapped apart


class SharedReadBuffer:
    """The buffer a listener's connections read into, one at a time (one event loop)."""

    __slots__ = ("view",)

    def __init__(self, size: int = READ_BUFFER_BYTES) -> None:
        self.view = memoryview(bytearray(size))


class BufferedReads(asyncio.BufferedProtocol):
    """*handler*'s connection, with its reads taken through *shared* (everything else passed on)."""

    __slots__ = ("_view", "handler")

    def __init__(self, handler: asyncio.Protocol, shared: SharedReadBuffer) -> None:
        self.handler = handler
        self._view = shared.view

    @property
    def get_buffer(self) -> Callable[[int], memoryview]:  # type: ignore[override]  # still a method
        """The method the TLS layer looks up once, when its ciphertext buffer was just allocated."""
        keep_large_blocks_apart()
        return self._shared_view

    def _shared_view(self, sizehint: int) -> memoryview:
        return self._view

    def buffer_updated(self, nbytes: int) -> None:
        if nbytes < LARGE_READ_BYTES:
            self.handler.data_received(self._view[:nbytes].tobytes())
            return
        map_io_blocks()  # our copy and the parser's body chunk
        try:
            self.handler.data_received(self._view[:nbytes].tobytes())
        finally:
            keep_large_blocks_apart()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        keep_large_blocks_apart()  # in case the TLS layer did not look get_buffer up before
        self.handler.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.handler.connection_lost(exc)

    def eof_received(self) -> bool | None:
        return self.handler.eof_received()

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()
