"""POST routes answered past aiohttp's application dispatch (limitguard.http.fast), on the real app.

The guard against an aiohttp upgrade: the dispatch asks the event loop module for the loop (a getpid
on CPython 3.11) and a direct POST does not. If aiohttp stops reading the server's request handler,
the direct POST asks again and the first test fails; if its dispatch stops asking, the same test
fails on the GET, and the direct POSTs are no longer needed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from aiohttp import web

from limitguard.http.app import create_app
from limitguard.http.fast import answer_posts_directly, direct_posts
from limitguard.http.modes import PLAIN
from limitguard.state.store import ClusterState
from limitguard.testing.server import app_services

LOOP_LOOKUPS = (asyncio.get_event_loop, asyncio.get_running_loop)


@contextmanager
def loop_lookups_by_aiohttp_server() -> Iterator[list[str]]:
    """The calls aiohttp's server modules (aiohttp/web_*.py) make to the loop lookups meanwhile."""
    calls: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call" and any(arg is lookup for lookup in LOOP_LOOKUPS):
            name = frame.f_code.co_filename.replace("\\", "/")
            if "/aiohttp/web_" in name:
                calls.append(f"{name.rsplit('/', 1)[-1]}:{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)


async def test_a_post_route_is_answered_without_the_dispatch_that_asks_for_the_loop(
    start_server: Callable[..., Any],
) -> None:
    server = await start_server(ClusterState())
    await server.get("/healthz")  # the connection is open before counting
    with loop_lookups_by_aiohttp_server() as calls:
        status, _ = await server.post("/validate", b"{}")
    assert status == 400  # answered by the endpoint: not an AdmissionReview
    assert calls == []
    with loop_lookups_by_aiohttp_server() as calls:
        status, _ = await server.get("/healthz")
    assert status == 200
    assert "web_app.py:_handle" in calls  # what a direct POST saves


async def test_in_the_plain_mode_every_post_takes_the_apps_dispatch(start_server: Callable[..., Any]) -> None:
    server = await start_server(ClusterState(), http_mode=PLAIN)
    await server.get("/healthz")
    with loop_lookups_by_aiohttp_server() as calls:
        status, _ = await server.post("/validate", b"{}")
    assert status == 400  # the same answer, through aiohttp's public dispatch
    assert "web_app.py:_handle" in calls


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/validate", 400),  # direct
        ("POST", "/vali%64ate", 400),  # direct: the path the router would match, decoded
        ("POST", "/validate/", 404),  # the app's catch-all, as before
        ("POST", "/nowhere", 404),
        ("GET", "/validate", 405),
        ("PUT", "/extender/filter", 405),
        ("GET", "/healthz", 200),
    ],
)
async def test_every_other_request_is_answered_by_the_app_as_before(
    start_server: Callable[..., Any], method: str, path: str, status: int
) -> None:
    server = await start_server(ClusterState())
    async with server.session.request(method, server.url + path, data=b"{}") as response:
        assert response.status == status
        if status != 200:
            assert response.content_type == "application/json"


def test_the_direct_routes_are_the_apps_plain_post_routes() -> None:
    app = create_app(app_services(ClusterState()))
    posts = direct_posts(app)
    assert {"/validate", "/mutate", "/extender/filter", "/extender/prioritize"} <= set(posts)
    assert not {"/healthz", "/readyz", "/metrics"} & set(posts)  # GET routes stay with the app


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def test_an_app_with_a_middleware_or_a_prepare_signal_keeps_its_dispatch() -> None:
    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        return await handler(request)

    async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
        return None

    with_middleware = web.Application(middlewares=[middleware])
    with_signal = web.Application()
    with_signal.on_response_prepare.append(on_prepare)
    for app in (with_middleware, with_signal):
        app.router.add_post("/validate", _ok)
        assert direct_posts(app) == {}
        runner = web.AppRunner(app)
        await runner.setup()
        try:
            assert runner.server is not None
            before = runner.server.request_handler
            answer_posts_directly(runner.server, app)
            assert runner.server.request_handler is before
        finally:
            await runner.cleanup()


async def test_answering_directly_twice_wraps_once() -> None:
    app = web.Application()
    app.router.add_post("/validate", _ok)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        assert runner.server is not None
        answer_posts_directly(runner.server, app)
        once = runner.server.request_handler
        answer_posts_directly(runner.server, app)
        assert runner.server.request_handler is once
        assert once is not app._handle  # wrapped the first time
    finally:
        await runner.cleanup()
