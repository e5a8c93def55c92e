"""POST routes handed their requests directly, past aiohttp's per-request application dispatch.

aiohttp's application handler (aiohttp 3.14, web_app.py `Application._handle`) starts every request
with `asyncio.get_event_loop()`, to read the loop's debug flag; on CPython 3.11 that call makes a
`getpid()` system call, one per request (bench/syscalls.py counts it). The admission and extender
routes are exact POST paths whose handlers need nothing of that dispatch: no middleware (the app
has none), no response-prepare signal, no `request.app` or `match_info`. So the server's request
handler answers those paths from a table and hands every other request (probes, metrics, 404, 405,
`Expect: 100-continue`) to the application as before.

The table is read from the app's own router, so a route added there is served the same way, and
an app with middlewares or response-prepare signals is left to aiohttp entirely.
tests/unit/http/test_direct.py fails if aiohttp stops reading the server's request handler or its
dispatch stops asking for the loop (then this module can go).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from aiohttp import hdrs, web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def direct_posts(app: web.Application) -> dict[str, Handler]:
    """The app's POST routes on plain paths, by path; none when the app has middlewares or signals
    on response preparation (a direct answer would skip them)."""
    if app.middlewares or app.on_response_prepare:
        return {}
    posts: dict[str, Handler] = {}
    for resource in app.router.resources():
        if not isinstance(resource, web.PlainResource):
            continue
        for route in resource:
            if route.method == hdrs.METH_POST:
                posts.setdefault(resource.canonical, route.handler)  # the router takes the first too
    return posts


def answer_posts_directly(server: web.Server, app: web.Application) -> None:
    """Serve *app*'s plain POST routes (`direct_posts`) without its dispatch on *server*, once."""
    fallback = server.request_handler
    posts: Mapping[str, Handler] = direct_posts(app)
    if not posts or getattr(fallback, "direct_posts", None) is not None:
        return

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.method == hdrs.METH_POST and hdrs.EXPECT not in request.headers:
            # the path the router matches: percent-decoded except for "/" and "%"
            handler = posts.get(request.rel_url.path_safe)
            if handler is not None:
                return await handler(request)  # type: ignore[arg-type]  # the app's Request factory
        return await fallback(request)

    handle.direct_posts = posts  # type: ignore[attr-defined]
    server.request_handler = handle
