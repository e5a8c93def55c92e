"""A list/watch Kubernetes API server for tests and benchmarks (no kube-apiserver can run here).

Reproduced, as kube-apiserver (watch cache + etcd3 storage) behaves for core/v1 nodes, pods and
namespaces at the cluster-wide paths `/api/v1/{nodes,pods,namespaces}`:

- resourceVersion: one cluster-wide counter (the etcd revision). Every write bumps it and stamps the
  object's `metadata.resourceVersion`; a list carries the revision of its snapshot in
  `metadata.resourceVersion`; a DELETED event carries the object at the revision of the delete.
- Paginated list: `limit` and `continue`. The first page fixes a snapshot; later pages read that
  same snapshot (a consistent list, whatever changes in between). Items come sorted by key
  (namespace/name) like etcd keys. The continue token is base64 JSON `{"v","rv","start"}` like the
  apiserver's. `remainingItemCount` is set when no selector is used. A continue token whose revision
  has been compacted gets HTTP 410 Gone (Status reason Expired).
- fieldSelector (list and watch): `=`, `==`, `!=`, comma = AND, on metadata.name,
  metadata.namespace, spec.nodeName and status.phase for pods; metadata.name for nodes; metadata.name
  and status.phase for namespaces. An unsupported field label answers 400 BadRequest. With a
  selector a page may hold fewer than `limit` items (even none) yet carry a continue token.
- Watch (`watch=true`/`1`): from resourceVersion N it replays every change after N then streams live
  ones; without N (or "0") it starts with synthetic ADDED events for the current objects. One JSON
  event per line: ADDED, MODIFIED, DELETED, BOOKMARK (only with `allowWatchBookmarks=true`: every
  `bookmark_interval` seconds and before `timeoutSeconds` closes the stream; the object has only
  kind, apiVersion and metadata.resourceVersion), ERROR (a Status object).
- Filtered watch semantics of the watch cache (cache_watcher.go convertToWatchEvent): an object that
  starts matching the selector is sent as ADDED; one that stops matching as DELETED carrying its
  previous content at the new resourceVersion. So a pod reaching Succeeded leaves a
  `status.phase!=Succeeded` watch as DELETED.
- 410 Gone for a too-old resourceVersion: by default as the watch cache does it, an HTTP 200 stream
  with one ERROR event `{"kind":"Status","code":410,"reason":"Expired"}` then end of stream; with
  `watch_gone_as_http=True` as an HTTP 410 answer (older/etcd-direct paths).
- `timeoutSeconds` ends a watch cleanly. Errors are `Status` objects. Bearer token authentication
  with a case-insensitive scheme (in-cluster loaders send `bearer`; 401 otherwise), HTTP or HTTPS.

Faults a test can inject (Python API): `close_watches(abort=False)` ends open streams cleanly,
`abort=True` cuts the connection in the middle of an event; `compact()` forgets history (older
watches and continue tokens get 410); `fail_next(kind, n, status)` answers the next n requests with an
error Status; `send_error(code)` sends an ERROR event to open watches; `gate(kind)` holds list
requests until released; `after_page` is called after each list page is served;
`pause_watch(kind, after_events=N)` lets the watch streams of *kind* write N more events and then
holds them (no events, no bookmarks) until `release()`: a test can stop a burst half-way through
delivery and look at the client in between.

Leases (coordination.k8s.io/v1, for leader election) at the namespaced paths
`/apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]`, sharing the one resourceVersion counter:
- GET of one Lease (404 NotFound), list (no pagination) and watch (as above, scoped to the namespace).
- POST creates (409 AlreadyExists when the name is taken; uid, creationTimestamp and resourceVersion
  are stamped). PUT replaces: when the body carries `metadata.resourceVersion` it must equal the
  stored one, else 409 Conflict with the apiserver's "the object has been modified" message
  (compare-and-swap, what client-go's resourcelock relies on); without one the update is
  unconditional (leases allow it). PUT of a missing Lease is 404 (no create-on-update). A body whose
  name differs from the path is 400; `spec.leaseDurationSeconds` <= 0 is 422 Invalid. DELETE removes.
- `fail_next("leases", n, status)` fails lease requests; `lease(ns, name)` reads one for assertions.

Not reproduced: labelSelector, resourceVersion/resourceVersionMatch on lists (every list is a fresh
consistent read), sendInitialEvents (streaming lists), the inconsistent continue token in a 410,
namespaced paths and GET of single objects and writes over HTTP (except Leases), protobuf/table output, gzip, HTTP/2,
priority and fairness (429s only via fail_next), object validation or defaulting, graceful deletion
(deletes are immediate), "too large resource version" waits.

Run standalone for benchmarks: `python -m limitguard.testing.fakeapiserver --nodes N --pods M` prints the port,
then control endpoints under /_fake/ (burst, rv) drive it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import bisect
import contextlib
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from limitguard.errors import LimitguardError

KIND_NAMES = {"nodes": "Node", "pods": "Pod", "namespaces": "Namespace"}
SELECTABLE_FIELDS = {
    "nodes": frozenset({"metadata.name"}),
    "pods": frozenset({"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"}),
    "namespaces": frozenset({"metadata.name", "status.phase"}),
}
LEASES = "leases"
LEASE_API_VERSION = "coordination.k8s.io/v1"
LEASES_PREFIX = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
SELECTABLE_FIELDS[LEASES] = frozenset({"metadata.name", "metadata.namespace"})


def object_key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{namespace}/{metadata['name']}" if namespace else str(metadata["name"])


def selectable_fields(obj: Mapping[str, Any]) -> dict[str, str]:
    metadata = obj.get("metadata") or {}
    return {
        "metadata.name": str(metadata.get("name") or ""),
        "metadata.namespace": str(metadata.get("namespace") or ""),
        "spec.nodeName": str((obj.get("spec") or {}).get("nodeName") or ""),
        "status.phase": str((obj.get("status") or {}).get("phase") or ""),
    }


def with_resource_version(body: bytes, rv: int) -> bytes:
    obj = orjson.loads(body)
    obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
    return orjson.dumps(obj)


class SelectorError(LimitguardError, ValueError):
    pass


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[tuple[str, bool, str], ...]  # (field, equal?, value)

    @classmethod
    def parse(cls, kind: str, text: str) -> FieldSelector:
        requirements = []
        for term in filter(None, (part.strip() for part in text.split(","))):
            if "!=" in term:
                name, value = term.split("!=", 1)
                equal = False
            elif "==" in term:
                name, value = term.split("==", 1)
                equal = True
            elif "=" in term:
                name, value = term.split("=", 1)
                equal = True
            else:
                raise SelectorError(f'invalid selector: "{text}"; can\'t understand "{term}"')
            if name not in SELECTABLE_FIELDS[kind]:
                raise SelectorError(f"field label not supported: {name}")
            requirements.append((name, equal, value))
        return cls(tuple(requirements))

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all((fields.get(name, "") == value) == equal for name, equal, value in self.requirements)


@dataclass(slots=True)
class Stored:
    key: str
    rv: int
    body: bytes  # the object as served; metadata.resourceVersion == rv
    fields: dict[str, str]


@dataclass(slots=True)
class Change:
    rv: int
    kind: str
    type: str  # ADDED, MODIFIED, DELETED (as stored, before selector filtering)
    current: Stored | None  # None for DELETED
    previous: Stored | None  # None for ADDED

    def visible_as(self, selector: FieldSelector) -> tuple[str, bytes] | None:
        """The event a watch with *selector* sees (cache_watcher.go convertToWatchEvent)."""
        now = self.current is not None and selector.matches(self.current.fields)
        before = self.previous is not None and selector.matches(self.previous.fields)
        if now and before:
            return "MODIFIED", self.current.body  # type: ignore[union-attr]
        if now:
            return "ADDED", self.current.body  # type: ignore[union-attr]
        if before:
            return "DELETED", with_resource_version(self.previous.body, self.rv)  # type: ignore[union-attr]
        return None


def event_line(event_type: str, body: bytes) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + body + b"}\n"


def status_body(code: int, reason: str, message: str) -> bytes:
    return orjson.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    )


@dataclass(eq=False)  # identity: watchers live in a set
class Watcher:
    kind: str
    selector: FieldSelector
    pending: list[bytes] = field(default_factory=list)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    closing: str = ""  # "", "clean" or "abort"

    def push(self, line: bytes) -> None:
        self.pending.append(line)
        self.wakeup.set()


@dataclass(eq=False)
class WatchPause:
    """Hold a kind's watch streams after `remaining` more events (see FakeApiServer.pause_watch)."""

    remaining: int
    holding: asyncio.Event = field(default_factory=asyncio.Event)  # set once the streams stopped
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        self.released.set()

    def take(self, lines: list[bytes]) -> list[bytes]:
        """The lines that may go out before the pause holds; counts them."""
        if self.released.is_set():
            return lines
        allowed = lines[: self.remaining]
        self.remaining -= len(allowed)
        if self.remaining == 0:
            self.holding.set()
        return allowed


@dataclass(frozen=True)
class Snapshot:
    rv: int
    keys: list[str]
    items: list[Stored]


@dataclass(frozen=True)
class RequestSeen:
    kind: str
    watch: bool
    params: dict[str, str]


class FakeApiServer:
    def __init__(
        self,
        token: str | None = None,
        bookmark_interval: float = 60.0,
        watch_gone_as_http: bool = False,
        history_limit: int = 1_000_000,
    ) -> None:
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.watch_gone_as_http = watch_gone_as_http
        self.history_limit = history_limit
        self.rv = 1
        self.compacted_rv = 1  # watches from below this get 410
        self.objects: dict[str, dict[str, Stored]] = {kind: {} for kind in KIND_NAMES}
        self.history: list[Change] = []
        self.watchers: set[Watcher] = set()
        self.requests: list[RequestSeen] = []
        self.after_page: Callable[[str, int], None] | None = None
        self._snapshots: dict[tuple[str, int], Snapshot] = {}
        self._failures: dict[str, list[int]] = {kind: [] for kind in KIND_NAMES}
        self._gates: dict[str, asyncio.Event] = {}
        self._pauses: dict[str, WatchPause] = {}
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.objects[LEASES] = {}
        self._failures[LEASES] = []

    # -- writes (the test drives the cluster through these) ----------------------------------
    def apply(self, kind: str, obj: Mapping[str, Any]) -> int:
        """Create or replace an object; returns the new resourceVersion."""
        key = object_key(obj)
        self.rv += 1
        copy = dict(obj)
        copy["metadata"] = {**(obj.get("metadata") or {}), "resourceVersion": str(self.rv)}
        stored = Stored(key, self.rv, orjson.dumps(copy), selectable_fields(copy))
        previous = self.objects[kind].get(key)
        self.objects[kind][key] = stored
        self._record(Change(self.rv, kind, "MODIFIED" if previous else "ADDED", stored, previous))
        return self.rv

    def delete(self, kind: str, key: str) -> int:
        previous = self.objects[kind].pop(key)
        self.rv += 1
        self._record(Change(self.rv, kind, "DELETED", None, previous))
        return self.rv

    def _record(self, change: Change) -> None:
        self.history.append(change)
        if len(self.history) > self.history_limit:
            self.compact(self.history[len(self.history) - self.history_limit].rv)
        for watcher in self.watchers:
            if watcher.kind == change.kind:
                visible = change.visible_as(watcher.selector)
                if visible is not None:
                    watcher.push(event_line(*visible))

    # -- faults ---------------------------------------------------------------------------------
    def compact(self, up_to: int | None = None) -> None:
        """Forget history up to *up_to* (default: now), like etcd compaction plus a full watch cache."""
        self.compacted_rv = self.rv if up_to is None else up_to
        self.history = [change for change in self.history if change.rv > self.compacted_rv]
        self._snapshots = {key: snap for key, snap in self._snapshots.items() if snap.rv >= self.compacted_rv}

    def close_watches(self, abort: bool = False) -> int:
        """End every open watch: cleanly, or by cutting the connection mid-event. Returns how many."""
        for watcher in self.watchers:
            watcher.closing = "abort" if abort else "clean"
            watcher.wakeup.set()
        return len(self.watchers)

    def send_error(self, code: int, reason: str = "Expired", message: str = "injected error") -> None:
        for watcher in self.watchers:
            watcher.push(event_line("ERROR", status_body(code, reason, message)))

    def fail_next(self, kind: str, count: int = 1, status: int = 500) -> None:
        self._failures[kind].extend([status] * count)

    def gate(self, kind: str) -> asyncio.Event:
        """Hold list requests of *kind* until the returned event is set."""
        self._gates[kind] = gate = asyncio.Event()
        return gate

    def pause_watch(self, kind: str, after_events: int) -> WatchPause:
        """Let *kind*'s watches write *after_events* more events, then hold them until released."""
        self._pauses[kind] = pause = WatchPause(after_events)
        if after_events == 0:
            pause.holding.set()
        return pause

    def open_watches(self, kind: str) -> int:
        return sum(1 for watcher in self.watchers if watcher.kind == kind)

    # -- HTTP -----------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application()
        for kind in KIND_NAMES:
            app.router.add_get(f"/api/v1/{kind}", self._handler(kind))
        self._add_lease_routes(app)
        app.router.add_post("/_fake/burst", self._burst)
        app.router.add_get("/_fake/rv", self._current_rv)
        return app

    async def start(
        self, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None
    ) -> str:
        self._runner = web.AppRunner(self.app(), shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"{'https' if ssl_context else 'http'}://{host}:{self.port}"

    async def stop(self) -> None:
        self.close_watches()
        for gate in self._gates.values():
            gate.set()
        for pause in self._pauses.values():
            pause.release()
        if self._runner is not None:
            await self._runner.cleanup()

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
            if gate is not None:
                await gate.wait()
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
            await response.prepare(request)
            while True:
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

    # -- leases (coordination.k8s.io/v1) ---------------------------------------------------------
    def lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        stored = self.objects[LEASES].get(f"{namespace}/{name}")
        return orjson.loads(stored.body) if stored is not None else None

    def _add_lease_routes(self, app: web.Application) -> None:
        collection = LEASES_PREFIX
        app.router.add_get(collection, self._lease_collection)
        app.router.add_post(collection, self._lease_create)
        app.router.add_get(collection + "/{name}", self._lease_get)
        app.router.add_put(collection + "/{name}", self._lease_update)
        app.router.add_delete(collection + "/{name}", self._lease_delete)

    def _lease_gate(self, request: web.Request, watch: bool = False) -> web.Response | None:
        """Authentication and injected failures, as for the core kinds."""
        self.requests.append(RequestSeen(LEASES, watch, dict(request.query)))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures[LEASES]:
            status = self._failures[LEASES].pop(0)
            return self._status(status, "InternalError" if status >= 500 else "TooManyRequests", "injected")
        return None

    @staticmethod
    def _lease_missing(name: str) -> web.Response:
        return FakeApiServer._status(404, "NotFound", f'leases.coordination.k8s.io "{name}" not found')

    async def _lease_collection(self, request: web.Request) -> web.StreamResponse:
        params = dict(request.query)
        watching = params.get("watch") in ("true", "1")
        if (refused := self._lease_gate(request, watching)) is not None:
            return refused
        namespace = request.match_info["namespace"]
        try:
            selector = FieldSelector.parse(LEASES, params.get("fieldSelector", ""))
        except SelectorError as error:
            return self._status(400, "BadRequest", str(error))
        selector = FieldSelector((("metadata.namespace", True, namespace), *selector.requirements))
        if watching:
            return await self._watch(request, LEASES, params, selector)
        ordered = sorted(self.objects[LEASES].values(), key=lambda stored: stored.key)
        chosen = [stored.body for stored in ordered if selector.matches(stored.fields)]
        body = (
            b'{"kind":"LeaseList","apiVersion":"'
            + LEASE_API_VERSION.encode()
            + b'","metadata":'
            + orjson.dumps({"resourceVersion": str(self.rv)})
            + b',"items":['
            + b",".join(chosen)
            + b"]}"
        )
        return web.Response(body=body, content_type="application/json")

    async def _lease_get(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        stored = self.objects[LEASES].get(f"{namespace}/{name}")
        if stored is None:
            return self._lease_missing(name)
        return web.Response(body=stored.body, content_type="application/json")

    async def _lease_body(self, request: web.Request, name: str | None) -> dict[str, Any] | web.Response:
        """The decoded Lease of a write, or the error the apiserver would answer."""
        try:
            obj = orjson.loads(await request.read())
        except orjson.JSONDecodeError as error:
            return self._status(400, "BadRequest", f"invalid JSON: {error}")
        if (
            not isinstance(obj, dict)
            or obj.get("kind") != "Lease"
            or obj.get("apiVersion") != LEASE_API_VERSION
        ):
            return self._status(400, "BadRequest", f"expected a Lease of {LEASE_API_VERSION}")
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        namespace = request.match_info["namespace"]
        if metadata.get("namespace") not in (None, "", namespace):
            return self._status(400, "BadRequest", "the namespace of the object does not match the request")
        if not metadata.get("name") or (name is not None and metadata["name"] != name):
            return self._status(400, "BadRequest", "the name of the object does not match the request")
        duration = (obj.get("spec") or {}).get("leaseDurationSeconds")
        if duration is not None and (not isinstance(duration, int) or duration <= 0):
            return self._status(
                422,
                "Invalid",
                f'Lease.coordination.k8s.io "{metadata["name"]}" is invalid: '
                "spec.leaseDurationSeconds: Invalid value: must be greater than 0",
            )
        obj["metadata"] = {**metadata, "namespace": namespace}
        return obj

    async def _lease_create(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        obj = await self._lease_body(request, None)
        if isinstance(obj, web.Response):
            return obj
        metadata = obj["metadata"]
        key = f"{metadata['namespace']}/{metadata['name']}"
        if key in self.objects[LEASES]:
            return self._status(
                409, "AlreadyExists", f'leases.coordination.k8s.io "{metadata["name"]}" already exists'
            )
        metadata.pop("resourceVersion", None)
        metadata["uid"] = f"lease-uid-{self.rv + 1}"
        metadata["creationTimestamp"] = "2026-01-01T00:00:00Z"
        self.apply(LEASES, obj)
        return web.Response(status=201, body=self.objects[LEASES][key].body, content_type="application/json")

    async def _lease_update(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        name = request.match_info["name"]
        obj = await self._lease_body(request, name)
        if isinstance(obj, web.Response):
            return obj
        key = f"{request.match_info['namespace']}/{name}"
        stored = self.objects[LEASES].get(key)
        if stored is None:
            return self._lease_missing(name)
        expected = obj["metadata"].get("resourceVersion")
        if expected and str(expected) != str(stored.rv):
            return self._status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on leases.coordination.k8s.io "{name}": the object has '
                "been modified; please apply your changes to the latest version and try again",
            )
        previous = orjson.loads(stored.body)["metadata"]
        for kept in ("uid", "creationTimestamp"):  # server-owned metadata survives a replace
            obj["metadata"][kept] = previous.get(kept)
        self.apply(LEASES, obj)
        return web.Response(body=self.objects[LEASES][key].body, content_type="application/json")

    async def _lease_delete(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        key = f"{request.match_info['namespace']}/{request.match_info['name']}"
        if key not in self.objects[LEASES]:
            return self._lease_missing(request.match_info["name"])
        self.delete(LEASES, key)
        return self._status(200, "", "deleted")

    # -- benchmark control ----------------------------------------------------------------------
    async def _current_rv(self, request: web.Request) -> web.Response:
        return web.json_response({"rv": self.rv, "watchers": len(self.watchers)})

    async def _burst(self, request: web.Request) -> web.Response:
        """Modify `count` pods (bumping a label); answers the last resourceVersion."""
        count = int(request.query.get("count", "10000"))
        pods = list(self.objects["pods"].values())
        modified = []
        for index in range(count):  # prepared first, so the burst itself goes out as fast as possible
            obj = orjson.loads(pods[index % len(pods)].body)
            obj["metadata"].setdefault("labels", {})["burst"] = str(index)
            modified.append(obj)
        for index, obj in enumerate(modified):
            self.apply("pods", obj)
            if index % 1000 == 999:
                await asyncio.sleep(0)  # let the watch writers drain while the burst goes on
        return web.json_response({"rv": self.rv})


# -- synthetic cluster objects (tests and benchmarks) ---------------------------------------------
def make_node(
    name: str, cpu: str = "8", memory: str = "32Gi", annotations: Mapping[str, str] | None = None
) -> dict:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
            "annotations": dict(annotations or {}),
        },
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
        },
    }


def make_pod(
    namespace: str,
    name: str,
    node: str = "",
    cpu_limit: str = "1",
    memory_limit: str = "1Gi",
    phase: str = "Running",
    uid: str | None = None,
) -> dict:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid or f"uid-{namespace}-{name}",
            "labels": {"app": name.rsplit("-", 1)[0]},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "rs",
                    "uid": "rs-uid",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/app:1.0",
                    "resources": {
                        "limits": {"cpu": cpu_limit, "memory": memory_limit},
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                    },
                    "env": [{"name": "MODE", "value": "production"}],
                },
            ],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
            ],
        },
        "status": {"phase": phase, "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def make_namespace(name: str) -> dict:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "status": {"phase": "Active"},
    }


def populate(server: FakeApiServer, nodes: int, pods: int, namespaces: int = 50) -> None:
    """A synthetic cluster: pods spread round-robin over nodes and namespaces, all Running."""
    for index in range(namespaces):
        server.apply("namespaces", make_namespace(f"ns-{index}"))
    for index in range(nodes):
        server.apply("nodes", make_node(f"node-{index:05d}"))
    for index in range(pods):
        server.apply(
            "pods",
            make_pod(
                f"ns-{index % namespaces}",
                f"app-{index:06d}",
                node=f"node-{index % nodes:05d}",
                cpu_limit="250m",
            ),
        )
    server.compact()  # the bulk load is not history anyone will watch from


async def _serve(args: argparse.Namespace) -> None:
    server = FakeApiServer(token=args.token, bookmark_interval=args.bookmark_interval)
    populate(server, args.nodes, args.pods)
    await server.start("127.0.0.1", args.port)
    print(server.port, flush=True)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--pods", type=int, default=10)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=None)
    parser.add_argument("--bookmark-interval", type=float, default=60.0)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(parser.parse_args()))


if __name__ == "__main__":
    main()
