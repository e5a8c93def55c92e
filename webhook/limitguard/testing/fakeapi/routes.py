"""The fake apiserver's list and watch endpoints for nodes, pods and namespaces.

Authentication and injected failures come first, as in the apiserver's filter chain; lists read a
consistent snapshot page by page; a watch replays history then streams live events and bookmarks.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from aiohttp import web

from limitguard.testing.fakeapi.objects import (
    KIND_NAMES,
    LEASE_API_VERSION,
    LEASES,
    FieldSelector,
    RequestSeen,
    SelectorError,
    Snapshot,
    Watcher,
    event_line,
    status_body,
)
from limitguard.testing.fakeapi.store import ClusterStore


class ListWatchRoutes(ClusterStore):
    def _handler(self, kind: str) -> Callable[[web.Request], Any]:
        async def handle(request: web.Request) -> web.StreamResponse:
            params = dict(request.query)
            watching = params.get("watch") in ("true", "1")
            self.requests.append(RequestSeen(kind, watching, params))
            if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
                return self._status(401, "Unauthorized", "Unauthorized")
            if self._failures[kind]:
                status = self._failures[kind].pop(0)
                return self._status(
                    status, "InternalError" if status >= 500 else "TooManyRequests", "injected"
                )
            try:
                selector = FieldSelector.parse(kind, params.get("fieldSelector", ""))
            except SelectorError as error:
                return self._status(400, "BadRequest", str(error))
            if watching:
                return await self._watch(request, kind, params, selector)
            gate = self._gates.get(kind)
            if gate is not None and not gate.is_set():
                self._held_lists[kind] = self._held_lists.get(kind, 0) + 1
                try:
                    await gate.wait()
                finally:
                    self._held_lists[kind] -= 1
            return self._list(kind, params, selector)

        return handle

    def _authorized(self, header: str) -> bool:
        """The bearer scheme is case-insensitive, as in the apiserver's bearertoken authenticator."""
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and token.strip() == self.token

    @staticmethod
    def _status(code: int, reason: str, message: str) -> web.Response:
        return web.Response(
            status=code, body=status_body(code, reason, message), content_type="application/json"
        )

    def _snapshot(self, kind: str) -> Snapshot:
        snapshot = self._snapshots.get((kind, self.rv))
        if snapshot is None:
            items = sorted(self.objects[kind].values(), key=lambda stored: stored.key)
            snapshot = Snapshot(self.rv, [stored.key for stored in items], items)
            self._snapshots[(kind, self.rv)] = snapshot
            for old in [key for key in self._snapshots if key[0] == kind][:-4]:  # keep a few per kind
                del self._snapshots[old]
        return snapshot

    def _list(self, kind: str, params: Mapping[str, str], selector: FieldSelector) -> web.Response:
        limit = int(params.get("limit") or 0)
        token = params.get("continue")
        if token:
            decoded = orjson.loads(base64.urlsafe_b64decode(token))
            snapshot = self._snapshots.get((kind, decoded["rv"]))
            if snapshot is None or decoded["rv"] < self.compacted_rv:
                return self._status(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter.",
                )
            start = bisect.bisect_left(snapshot.keys, decoded["start"])
        else:
            snapshot, start = self._snapshot(kind), 0
        chosen: list[bytes] = []
        index = start
        while index < len(snapshot.items) and (not limit or len(chosen) < limit):
            stored = snapshot.items[index]
            index += 1
            if selector.matches(stored.fields):
                chosen.append(stored.body)
        metadata: dict[str, Any] = {"resourceVersion": str(snapshot.rv)}
        if index < len(snapshot.items):
            start_key = snapshot.keys[index - 1] + "\x00"
            metadata["continue"] = base64.urlsafe_b64encode(
                orjson.dumps({"v": "meta.k8s.io/v1", "rv": snapshot.rv, "start": start_key})
            ).decode()
            if not selector.requirements:
                metadata["remainingItemCount"] = len(snapshot.items) - index
        body = (
            b'{"kind":"'
            + KIND_NAMES[kind].encode()
            + b'List","apiVersion":"v1","metadata":'
            + orjson.dumps(metadata)
            + b',"items":['
            + b",".join(chosen)
            + b"]}"
        )
        if self.after_page is not None:
            self.after_page(kind, len(chosen))
        return web.Response(body=body, content_type="application/json")

    async def _watch(
        self, request: web.Request, kind: str, params: Mapping[str, str], selector: FieldSelector
    ) -> web.StreamResponse:
        rv_text = params.get("resourceVersion", "")
        since = int(rv_text) if rv_text.isdigit() else 0
        too_old = since != 0 and since < self.compacted_rv
        if too_old and self.watch_gone_as_http:
            return self._status(410, "Expired", f"too old resource version: {since} ({self.compacted_rv})")
        watcher = Watcher(kind, selector)
        if too_old:
            watcher.push(
                event_line("ERROR", status_body(410, "Expired", f"too old resource version: {since}"))
            )
            watcher.closing = "clean"
        elif since == 0:
            for stored in self.objects[kind].values():
                if selector.matches(stored.fields):
                    watcher.push(event_line("ADDED", stored.body))
        else:
            first = bisect.bisect_right([change.rv for change in self.history], since)
            for change in self.history[first:]:
                if change.kind == kind and (visible := change.visible_as(selector)) is not None:
                    watcher.push(event_line(*visible))
        self.watchers.add(watcher)  # same loop turn as the replay: nothing can slip in between
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(params.get("timeoutSeconds") or 1800)
        bookmarks = params.get("allowWatchBookmarks") == "true"
        try:
            if self.take_headless(kind):
                watcher.closing = "silent"
                await _while_silent(request, watcher)
                return response  # never prepared: the client saw nothing of it
            await response.prepare(request)
            while True:
                if watcher.closing == "silent":
                    await _while_silent(request, watcher)
                    if watcher.closing == "silent":
                        return response
                    continue
                pause = self._pauses.get(kind)
                if pause is not None and pause.holding.is_set() and not pause.released.is_set():
                    await pause.released.wait()
                    continue
                if watcher.pending:
                    lines = pause.take(watcher.pending) if pause is not None else watcher.pending
                    watcher.pending = watcher.pending[len(lines) :]
                    await response.write(b"".join(lines))
                    continue  # a bookmark must never overtake an event already queued
                if watcher.closing == "abort":
                    await response.write(b'{"type":"MODIFIED","object":{"kind":')  # half an event
                    assert request.transport is not None
                    request.transport.close()  # flushes the half event, then cuts: no end chunk
                    return response
                if watcher.closing:
                    break
                remaining = deadline - loop.time()
                if remaining <= 0:
                    if bookmarks and not watcher.pending:
                        await response.write(self._bookmark(kind))
                    break
                watcher.wakeup.clear()
                if watcher.pending or watcher.closing:
                    continue
                wait = min(remaining, self.bookmark_interval) if bookmarks else remaining
                try:
                    await asyncio.wait_for(watcher.wakeup.wait(), wait)
                except TimeoutError:
                    if bookmarks and not watcher.pending and not watcher.closing and loop.time() < deadline:
                        await response.write(self._bookmark(kind))
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self.watchers.discard(watcher)
        return response

    def _bookmark(self, kind: str) -> bytes:
        kind_name, api_version = ("Lease", LEASE_API_VERSION) if kind == LEASES else (KIND_NAMES[kind], "v1")
        return event_line(
            "BOOKMARK",
            orjson.dumps(
                {"kind": kind_name, "apiVersion": api_version, "metadata": {"resourceVersion": str(self.rv)}}
            ),
        )


async def _while_silent(request: web.Request, watcher: Watcher) -> None:
    """A path that drops packets: nothing more arrives and the stream never ends, until the client
    gives up on it (or the server stops)."""
    while watcher.closing == "silent" and not (request.transport is None or request.transport.is_closing()):
        watcher.wakeup.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(watcher.wakeup.wait(), 0.02)
