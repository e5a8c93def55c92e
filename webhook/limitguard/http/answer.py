"""A route's 200 JSON answer, written in one piece.

aiohttp's `web.Response` builds a header multidict for every answer, checks cookies, compression,
chunking and the Connection rules, runs the app's response-prepare hook and serialises the headers
one by one before it writes. Admission and extender answers always have one shape: 200,
`application/json`, a length. `JsonAnswer` writes that status line, the headers aiohttp writes for
it (Content-Type, Content-Length, Date from aiohttp's own once-a-second cache, Server) and the
body with one write on the request's own writer, and answers aiohttp's request handler as a
response does (`prepare`, `write_eof`, `keep_alive`); docs/benchmarks.md has what it saves. The
app has no response-prepare hook (limitguard.http.direct relies on that too). A request that is
not HTTP/1.1 keep-alive gets aiohttp's `web.Response`, whose Connection rules cover every version.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11

_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nDate: %s\r\nServer: "
    + SERVER_SOFTWARE.encode()
    + b"\r\n\r\n"
)


class JsonAnswer:
    """200 with a JSON body for an HTTP/1.1 request that keeps its connection (see `json_answer`)."""

    __slots__ = ("body",)
    status = 200
    keep_alive = True  # made only for requests that keep the connection

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter:
        writer = request.writer
        body = self.body
        await writer.write(_HEAD % (len(body), rfc822_formatted_time().encode()) + body)
        return writer

    async def write_eof(self, data: bytes = b"") -> None:
        """Everything was written by `prepare`."""


def json_answer(request: web.BaseRequest, body: bytes) -> web.StreamResponse:
    """The answer carrying *body*: a `JsonAnswer` where it applies, aiohttp's Response otherwise."""
    if request.version == HttpVersion11 and request.keep_alive:
        return JsonAnswer(body)  # type: ignore[return-value]  # what the request handler uses of one
    return web.Response(body=body, content_type="application/json")
