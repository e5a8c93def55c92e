"""Request bodies under a size and time limit, and JSON error answers, for every POST route."""

from __future__ import annotations

import asyncio

import orjson
from aiohttp import web


class BodyError(Exception):
    """A body that cannot be read within the limits; answered with *status*."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def _read(request: web.Request, limit: int) -> bytes:
    if request.content_length is not None and request.content_length > limit:
        raise BodyError(413, f"body of {request.content_length} bytes exceeds the limit of {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(1 << 16):  # also bounds chunked bodies
        size += len(chunk)
        if size > limit:
            raise BodyError(413, f"body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_body(request: web.Request, limit: int, timeout: float) -> bytes:
    """The whole body, or BodyError: 413 past *limit* bytes, 408 when slower than *timeout* seconds."""
    if request.content.is_eof():
        # Already received in full (the usual case for an admission review): nothing to wait for,
        # so no timer, no task (wait_for wraps its coroutine in one) and no chunk iterator.
        if request.content_length is not None and request.content_length > limit:
            raise BodyError(413, f"body of {request.content_length} bytes exceeds the limit of {limit} bytes")
        body = request.content.read_nowait()
        if len(body) > limit:
            raise BodyError(413, f"body exceeds the limit of {limit} bytes")
        return body
    try:
        return await asyncio.wait_for(_read(request, limit), timeout)
    except TimeoutError:
        raise BodyError(408, f"body not received within {timeout:g}s") from None


def json_error(status: int, message: str) -> web.Response:
    return web.Response(
        status=status,
        body=orjson.dumps({"error": message, "status": status}),
        content_type="application/json",
    )
