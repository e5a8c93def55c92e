"""A route's 200 JSON answer as the client reads it off the wire, in either HTTP mode (written in one piece by
limitguard.http.fast, by aiohttp's web.Response in the plain mode).

What a client sees must not depend on which path wrote the answer: the same status line and headers
aiohttp writes, keep-alive for HTTP/1.1, pipelined requests answered in order, and aiohttp's own
answer (with its Connection rules) for HTTP/1.0 and for a client that asks to close.
"""

from __future__ import annotations

import asyncio
from email.utils import parsedate_to_datetime

import orjson
from aiohttp.http import SERVER_SOFTWARE

from limitguard.testing.examples import config, worked_example
from tests.integration.http.wire import open_tls, read_answer
from tests.support import HANG_GUARD_SECONDS, binding

BODY = orjson.dumps(binding("pod5", "node1", dry_run=True))


def request(version: bytes = b"HTTP/1.1", *headers: bytes) -> bytes:
    head = [b"POST /validate?timeout=10s " + version, b"Host: localhost", b"Content-Type: application/json"]
    head += [*headers, b"Content-Length: " + str(len(BODY)).encode()]
    return b"\r\n".join(head) + b"\r\n\r\n" + BODY


async def connect(start_server, cert_dir):
    server = await start_server(worked_example(), config())
    return await open_tls(server.url, cert_dir)


async def test_http_1_1_answers_keep_the_connection_with_aiohttps_headers(start_server, cert_dir):
    reader, writer = await connect(start_server, cert_dir)
    writer.write(request())
    first = await read_answer(reader)
    writer.write(request())  # the same connection serves the next request
    second = await read_answer(reader)
    writer.write(request() + request())  # pipelined: both answered, in order
    third, fourth = await read_answer(reader), await read_answer(reader)
    writer.close()
    for status, headers, review in (first, second, third, fourth):
        assert status == b"HTTP/1.1 200 OK"
        assert list(headers) == ["content-type", "content-length", "date", "server"]
        assert headers["content-type"] == "application/json"
        assert headers["server"] == SERVER_SOFTWARE
        assert parsedate_to_datetime(headers["date"]).tzinfo is not None  # an RFC 9110 HTTP-date
        assert review["kind"] == "AdmissionReview"
        assert review["response"]["allowed"] is False  # node1 is full by limits: decided, not echoed


async def test_http_1_0_and_a_close_get_aiohttps_answer_and_the_connection_closes(start_server, cert_dir):
    for version, extra, connection in (
        (b"HTTP/1.0", (), None),
        (b"HTTP/1.1", (b"Connection: close",), "close"),
    ):
        reader, writer = await connect(start_server, cert_dir)
        writer.write(request(version, *extra))
        status, headers, review = await read_answer(reader)
        assert status == version + b" 200 OK"
        assert headers.get("connection") == connection
        assert headers["content-type"] == "application/json"
        assert review["response"]["allowed"] is False
        assert await asyncio.wait_for(reader.read(), HANG_GUARD_SECONDS) == b""  # closed after it
        writer.close()
