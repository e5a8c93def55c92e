"""The fake API server itself reproduces the apiserver behaviours its docstring claims."""

from __future__ import annotations

import asyncio

import aiohttp
import orjson

from limitguard.kube.livefeed import ACTIVE_PODS_SELECTOR
from limitguard.testing.builders import make_pod
from limitguard.testing.fakeapi import FakeApiServer


async def get(url: str, **params: str) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session, session.get(url, params=params) as response:
        return response.status, orjson.loads(await response.read())


async def watch_lines(url: str, count: int, **params: str) -> list[dict]:
    events: list[dict] = []
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, params={"watch": "true", **params}) as response,
    ):
        while len(events) < count:
            line = await response.content.readline()
            if not line:
                break
            events.append(orjson.loads(line))
    return events


async def test_paginated_list_is_a_consistent_snapshot() -> None:
    server = FakeApiServer()
    for index in range(5):
        server.apply("pods", make_pod("ns", f"p{index}", "n1"))
    url = await server.start() + "/api/v1/pods"
    try:
        status, first = await get(url, limit="2")
        assert status == 200 and [i["metadata"]["name"] for i in first["items"]] == ["p0", "p1"]
        assert first["metadata"]["remainingItemCount"] == 3
        server.delete("pods", "ns/p3")
        server.apply("pods", make_pod("ns", "p2", "n2"))
        _, second = await get(url, limit="2", **{"continue": first["metadata"]["continue"]})
        assert [i["metadata"]["name"] for i in second["items"]] == ["p2", "p3"]  # the old snapshot
        assert second["items"][0]["spec"]["nodeName"] == "n1"
        assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        server.compact()
        status, gone = await get(url, limit="2", **{"continue": second["metadata"]["continue"]})
        assert status == 410 and gone["reason"] == "Expired"
        status, bad = await get(url, fieldSelector="spec.schedulerName=x")
        assert status == 400 and "field label not supported" in bad["message"]
    finally:
        await server.stop()


async def test_filtered_watch_turns_leaving_the_selector_into_deleted() -> None:
    server = FakeApiServer()
    rv = server.apply("pods", make_pod("ns", "a", "n1"))
    url = await server.start() + "/api/v1/pods"
    try:
        server.apply("pods", make_pod("ns", "a", "n1", phase="Succeeded"))
        server.apply("pods", make_pod("ns", "a", "n1", phase="Running"))
        events = await watch_lines(url, 2, resourceVersion=str(rv), fieldSelector=ACTIVE_PODS_SELECTOR)
        assert [e["type"] for e in events] == ["DELETED", "ADDED"]
        assert events[0]["object"]["status"]["phase"] == "Running"  # previous content ...
        assert events[0]["object"]["metadata"]["resourceVersion"] == str(rv + 1)  # ... at the new rv
        server.compact()
        [error] = await watch_lines(url, 1, resourceVersion=str(rv))
        assert error["type"] == "ERROR" and error["object"]["code"] == 410
    finally:
        await server.stop()


async def test_pause_watch_holds_a_stream_after_n_events_until_released() -> None:
    server = FakeApiServer(bookmark_interval=0.01)  # bookmarks are due all the time, yet held too
    url = await server.start() + "/api/v1/pods"
    pause = server.pause_watch("pods", after_events=2)
    try:
        rvs = [server.apply("pods", make_pod("ns", f"p{index}", "n1")) for index in range(5)]
        params = {"watch": "true", "resourceVersion": "1", "allowWatchBookmarks": "true"}
        async with aiohttp.ClientSession() as session, session.get(url, params=params) as response:
            before = [orjson.loads(await response.content.readline()) for _ in range(2)]
            await pause.holding.wait()
            for _ in range(100):  # plenty of turns for the writer, were it not held
                await asyncio.sleep(0)
            assert [len(watcher.pending) for watcher in server.watchers] == [3]  # still queued
            pause.release()
            after = [orjson.loads(await response.content.readline()) for _ in range(3)]
        names = [event["object"]["metadata"]["name"] for event in before + after]
        assert names == ["p0", "p1", "p2", "p3", "p4"]  # no bookmark overtook a held event
        assert [event["type"] for event in before + after] == ["ADDED"] * 5
        assert after[-1]["object"]["metadata"]["resourceVersion"] == str(rvs[-1])
    finally:
        await server.stop()


async def test_apply_endpoint_writes_objects_that_watches_then_see() -> None:
    server = FakeApiServer()
    base = await server.start()
    try:
        pending = make_pod("ns", "a", "")
        bound = make_pod("ns", "a", "n1")
        async with aiohttp.ClientSession() as session:
            for body in ({"kind": "pods", "items": [pending]}, {"kind": "pods", "items": [bound]}):
                async with session.post(base + "/_fake/apply", data=orjson.dumps(body)) as response:
                    assert response.status == 200
                    last_rv = (await response.json())["rv"]
            for bad in (b"{", b'{"kind": "secrets", "items": []}', b'{"kind": "pods", "items": [{}]}'):
                async with session.post(base + "/_fake/apply", data=bad) as response:
                    assert response.status == 400
        assert last_rv == server.rv
        events = await watch_lines(base + "/api/v1/pods", 2, resourceVersion="1")
        assert [(e["type"], e["object"]["spec"]["nodeName"]) for e in events] == [
            ("ADDED", ""),
            ("MODIFIED", "n1"),
        ]
    finally:
        await server.stop()
