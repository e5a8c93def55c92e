"""The fake apiserver's storage: objects per kind, one resourceVersion counter, history, watchers.

Writes fan out to the open watches in the same loop turn; the fault switches (compaction, closed or
paused watches, failing requests, held lists) live here so the HTTP side only consults them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from aiohttp import web

from limitguard.testing.fakeapi.objects import (
    KIND_NAMES,
    LEASES,
    Change,
    RequestSeen,
    Snapshot,
    Stored,
    Watcher,
    WatchPause,
    event_line,
    object_key,
    selectable_fields,
    status_body,
)


class ClusterStore:
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
        self._held_lists: dict[str, int] = {}  # list requests waiting at a gate, per kind
        self._pauses: dict[str, WatchPause] = {}
        self._headless: dict[str, int] = {}  # watches of a kind to go silent before their headers
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

    def silence_watches(self, kind: str) -> int:
        """Make the open watches of *kind* go silent, as over a TCP path that drops every packet:
        no event, bookmark or end of stream reaches the client any more. Returns how many."""
        silenced = 0
        for watcher in self.watchers:
            if watcher.kind == kind and not watcher.closing:
                watcher.closing = "silent"
                watcher.wakeup.set()
                silenced += 1
        return silenced

    def silence_next_watch(self, kind: str) -> None:
        """The next watch of *kind* goes silent before its response starts: not even the headers
        arrive (a path that died as the request went out), until the client closes."""
        self._headless[kind] = self._headless.get(kind, 0) + 1

    def take_headless(self, kind: str) -> bool:
        """Whether this watch of *kind* is one `silence_next_watch` asked for (counted off)."""
        if not self._headless.get(kind):
            return False
        self._headless[kind] -= 1
        return True

    def send_error(self, code: int, reason: str = "Expired", message: str = "injected error") -> None:
        for watcher in self.watchers:
            watcher.push(event_line("ERROR", status_body(code, reason, message)))

    def fail_next(self, kind: str, count: int = 1, status: int = 500) -> None:
        self._failures[kind].extend([status] * count)

    def recover(self, kind: str) -> None:
        """Drop the failures still queued for *kind* (the apiserver is back)."""
        self._failures[kind].clear()

    def gate(self, kind: str) -> asyncio.Event:
        """Hold list requests of *kind* until the returned event is set."""
        self._gates[kind] = gate = asyncio.Event()
        return gate

    def gate_waiting(self, kind: str) -> int:
        """How many list requests of *kind* are held at the gate now."""
        return self._held_lists.get(kind, 0)

    def pause_watch(self, kind: str, after_events: int) -> WatchPause:
        """Let *kind*'s watches write *after_events* more events, then hold them until released."""
        self._pauses[kind] = pause = WatchPause(after_events)
        if after_events == 0:
            pause.holding.set()
        return pause

    def open_watches(self, kind: str) -> int:
        return sum(1 for watcher in self.watchers if watcher.kind == kind)

    def lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One Lease as stored (for a test's assertions), or None."""
        stored = self.objects[LEASES].get(f"{namespace}/{name}")
        return orjson.loads(stored.body) if stored is not None else None
