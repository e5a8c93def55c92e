"""List-then-watch of one resource kind into a sink, the way client-go's Reflector does it.

One Reflector per kind. It lists (paginated, a consistent snapshot), then watches from the list's
resourceVersion; a dropped stream resumes from the last resourceVersion it applied, and only a 410
Gone (history compacted) costs a full relist. Errors back off exponentially with jitter, capped at a
few seconds, so replicas neither hammer a recovering API server in step nor stay behind it long.

A relist never holds every page: each page is applied as it arrives and, at the end, whatever the
snapshot did not contain is removed. Readiness stays on meanwhile (as client-go's informers keep
serving their store until Replace): every object is at its last known or a newer version, and what
vanished during the outage counts until the list ends, which over-counts and never under-counts.
State work runs in slices of a few milliseconds with a yield to the event loop between them, so
admissions keep being answered during a big sync or burst.

A watch whose TCP path silently drops packets sends nothing and never ends. The server is asked to
end every stream after 15-20 s (timeoutSeconds); a stream still open a grace period past that is
declared stalled, closed and resumed from the last resourceVersion. Decisions go on from the last
state meanwhile; only when a kind could not be refreshed for `unready_after_seconds` is the state
marked not synced (so /readyz fails and the not-ready policy answers), and synced again at the next
successful contact.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import orjson

from limitguard.clock import Clock, SystemClock
from limitguard.kube.client import ApiError
from limitguard.kube.listwatch import (
    KindSink,
    ListWatchClient,
    ProtocolError,
    ReflectorSettings,
    WatchEnd,
    WatchErrorEvent,
    WatchMetrics,
    resource_version,
)
from limitguard.kube.retry import Backoff, describe, what_to_check

log = logging.getLogger(__name__)


class Reflector:
    def __init__(
        self,
        client: ListWatchClient,
        kind: str,
        path: str,
        sink: KindSink,
        *,
        field_selector: str | None = None,
        settings: ReflectorSettings | None = None,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        stall_sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.path = path
        self.sink = sink
        self.field_selector = field_selector
        self.settings = settings or ReflectorSettings()
        self.metrics: WatchMetrics | None = None
        self.resource_version = ""  # last applied; "" until the first list completes
        self.lists_completed = 0
        self._rng = rng or random.Random()
        # Backoff sleeps, healthy-watch timing and the length of a slice of state work.
        self.clock: Clock = clock or SystemClock()
        self._backoff = Backoff(
            self.settings.backoff_initial_seconds, self.settings.backoff_max_seconds, self._rng
        )
        # Set whenever resource_version moves (a new leader waits on it to catch up), and a way
        # to ask for a fresh consistent list when the watch brings nothing new for too long.
        self.progressed = asyncio.Event()
        self._relist_requested = False
        self._stream: aiohttp.ClientResponse | None = None
        # The stall deadline runs on the event loop's own monotonic time, not on *clock*: a test
        # clock that jumps through every sleep would end each stream the moment it opened.
        self._stall_sleep = stall_sleep or asyncio.sleep
        self.refreshed_at: float | None = None  # last contact that proved the state current
        self.stale = False  # marked not synced for want of a refresh

    def request_relist(self) -> None:
        """End the current watch and list afresh (a list is at least as new as the request)."""
        self._relist_requested = True
        if self._stream is not None:
            self._stream.close()

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> None:
        """List, then watch forever; only cancellation ends it."""
        need_list = True
        watches_since_list = 0
        while True:
            try:
                if self._relist_requested:
                    need_list, self._relist_requested = True, False
                if need_list:
                    await self.list_and_replace()
                    need_list = False
                    watches_since_list = 0
                if watches_since_list and self.metrics is not None:
                    self.metrics.watch_restarts.labels(self.kind).inc()
                watches_since_list += 1
                started = self.clock.now()
                end = await self.watch_once()
                if end is WatchEnd.GONE:
                    log.info("watch history compacted, relisting", extra={"kind": self.kind})
                    need_list = True
                    continue
                if end is WatchEnd.STALLED:
                    await self._wait("watch stream stalled (nothing received past its timeout)", None)
                    continue
                if (
                    self._relist_requested
                    or self.clock.now() - started >= self.settings.healthy_watch_seconds
                ):
                    self._backoff.reset()
                    continue
                await self._wait("watch stream ended early", None)
            except ApiError as error:
                if error.status == 410:
                    need_list = True
                    await self._wait(f"{error}, relisting", None, error)
                else:
                    await self._wait(str(error), error.retry_after, error)
            except (aiohttp.ClientError, TimeoutError, ProtocolError, OSError, ValueError) as error:
                await self._wait(describe(error), None, error)
            except Exception as error:
                # A bug must not silently end the feed while /readyz keeps saying ok.
                log.exception("list/watch loop failed", extra={"kind": self.kind})
                await self._wait(describe(error), None, error)

    def refreshed(self) -> None:
        """The apiserver answered: the state is as current as the stream it feeds."""
        self.refreshed_at = self.clock.now()
        if self.stale:
            self.stale = False
            self.sink.mark_synced(True)
            log.warning("state refreshed again", extra={"kind": self.kind})

    def _check_staleness(self) -> None:
        if self.stale or not self.lists_completed or self.refreshed_at is None:
            return
        stale_for = self.clock.now() - self.refreshed_at
        if stale_for > self.settings.unready_after_seconds:
            self.stale = True
            self.sink.mark_synced(False)
            log.warning(
                "state not refreshed for too long: marked not ready",
                extra={"kind": self.kind, "stale_s": round(stale_for, 3)},
            )

    async def _wait(self, why: str, at_least: float | None, error: BaseException | None = None) -> None:
        self._check_staleness()
        delay = max(self._backoff.next_delay(), at_least or 0.0)
        base_url = getattr(self.client, "base_url", "")
        log.warning(
            "list/watch problem, retrying",
            extra={
                "kind": self.kind,
                "url": f"{base_url}{self.path}",
                "error": why,
                "check": what_to_check(error, self.kind),
                "retry_in_s": round(delay, 3),
            },
        )
        await self.clock.sleep(delay)

    # -- list -------------------------------------------------------------------------------
    async def list_and_replace(self) -> None:
        """Make the sink hold exactly the current list, page by page. Only the first list leaves
        readiness off meanwhile; a relist keeps deciding on the state it replaces."""
        if self.lists_completed and self.metrics is not None:
            self.metrics.relists.labels(self.kind).inc()
        timeout = aiohttp.ClientTimeout(
            total=self.settings.list_timeout_seconds, connect=self.settings.connect_timeout_seconds
        )
        # Keys held before the list that it has not shown again: empty on the first list, so no set
        # of every listed key (150,000 pods) is ever built.
        stale = self.sink.held_keys()
        listed = 0
        continue_token = ""
        while True:
            params = {"limit": str(self.settings.page_size)}
            if self.field_selector:
                params["fieldSelector"] = self.field_selector
            if continue_token:
                params["continue"] = continue_token
            page = await self.client.get_json(self.path, params, timeout)
            items = page.get("items") if isinstance(page, Mapping) else None
            metadata = page.get("metadata") if isinstance(page, Mapping) else None
            if not isinstance(items, list | None) or not isinstance(metadata, Mapping):
                raise ProtocolError(f"list of {self.kind} is not a List object")
            listed += await self._apply_page(items or [], stale)
            self.sink.page_applied()
            continue_token = str(metadata.get("continue") or "")
            if not continue_token:
                break
            del page, items  # only one page alive at a time
        await self._remove_stale(stale)
        self.resource_version = str(metadata.get("resourceVersion") or "")
        self.lists_completed += 1
        self._backoff.reset()
        self.stale = False
        self.refreshed()
        self.sink.mark_synced(True)
        self.sink.caught_up()
        self.progressed.set()
        log.info(
            "listed",
            extra={"kind": self.kind, "objects": listed, "resourceVersion": self.resource_version},
        )

    def _slice_deadline(self) -> float:
        return self.clock.now() + self.settings.slice_seconds

    async def _apply_page(self, items: list[Any], stale: set[str]) -> int:
        """Apply a listed page, crossing its keys off *stale*; returns how many objects it applied."""
        upsert = self.sink.upsert
        deadline = self._slice_deadline()
        applied = 0
        for obj in items:
            if isinstance(obj, Mapping):
                stale.discard(upsert(obj))
                applied += 1
            if self.clock.now() >= deadline:
                await asyncio.sleep(0)  # a cooperative yield, not a wait: never the clock's sleep
                deadline = self._slice_deadline()
        return applied

    async def _remove_stale(self, stale: set[str]) -> None:
        deadline = self._slice_deadline()
        for key in sorted(stale):
            self.sink.remove(key)
            if self.clock.now() >= deadline:
                await asyncio.sleep(0)
                deadline = self._slice_deadline()

    # -- watch ------------------------------------------------------------------------------
    async def watch_once(self) -> WatchEnd:
        """One watch stream from `resource_version`, applied event by event until it ends."""
        low, high = self.settings.watch_timeout_seconds
        server_timeout = self._rng.randint(low, high)
        params = {
            "watch": "true",
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(server_timeout),
        }
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        # A live stream ends by the server's timeoutSeconds; one still open past the grace is dead
        # (the stall deadline below). The read timeout is only a backstop behind it.
        grace = self.settings.watch_stall_grace_seconds
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.settings.connect_timeout_seconds, sock_read=server_timeout + grace + 5
        )
        counts: Counter[str] = Counter()
        # The deadline runs from the request, as the server's timeoutSeconds does: a path that
        # dies before the response's headers arrive is noticed by it too.
        stream = asyncio.ensure_future(self._stream_events(params, timeout, counts))
        deadline = asyncio.ensure_future(self._stall_sleep(server_timeout + grace))
        try:
            await asyncio.wait((stream, deadline), return_when=asyncio.FIRST_COMPLETED)
            if stream.done():
                return stream.result()
            log.warning(
                "watch stalled: nothing received past its timeout, restarting",
                extra={"kind": self.kind, "timeout_s": server_timeout, "grace_s": grace},
            )
            if self.metrics is not None:
                self.metrics.watch_stalls.labels(self.kind).inc()
            return WatchEnd.STALLED
        finally:
            for task in (stream, deadline):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            self._flush_counts(counts)

    async def _stream_events(
        self, params: Mapping[str, str], timeout: aiohttp.ClientTimeout, counts: Counter[str]
    ) -> WatchEnd:
        try:
            async with self.client.get(self.path, params, timeout) as response:
                self._stream = response
                self.refreshed()
                return await self._consume(response.content, counts)
        finally:
            self._stream = None

    async def _consume(self, stream: aiohttp.StreamReader, counts: Counter[str]) -> WatchEnd:
        partial = b""
        deadline = self._slice_deadline()
        while True:
            chunk = await stream.readany()
            if not chunk:
                # A last event without its newline is complete only if it parses; a cut one is dropped
                # and replayed after resuming from the last applied resourceVersion.
                if partial.strip():
                    log.debug("truncated event dropped", extra={"kind": self.kind, "bytes": len(partial)})
                return WatchEnd.CLOSED
            lines = (partial + chunk).split(b"\n") if partial else chunk.split(b"\n")
            partial = lines.pop()
            for line in lines:
                if line and self._apply_event(line, counts) is WatchEnd.GONE:
                    return WatchEnd.GONE
                if self.clock.now() >= deadline:
                    self._flush_counts(counts)
                    await asyncio.sleep(0)
                    deadline = self._slice_deadline()
            self._flush_counts(counts)  # once per chunk: cheap, and /metrics never lags an idle stream
            self.refreshed_at = self.clock.now()
            self.sink.caught_up()
            self.progressed.set()

    def _apply_event(self, line: bytes, counts: Counter[str]) -> WatchEnd | None:
        event = orjson.loads(line)
        kind = event.get("type")
        obj = event.get("object")
        if kind == "ERROR":
            code = obj.get("code") if isinstance(obj, Mapping) else None
            if code == 410:
                return WatchEnd.GONE
            message = obj.get("message") if isinstance(obj, Mapping) else obj
            raise WatchErrorEvent(f"watch ERROR event {code}: {message}")
        if not isinstance(obj, Mapping):
            log.warning("watch event without an object", extra={"kind": self.kind, "type": kind})
            return None
        try:
            if kind in ("ADDED", "MODIFIED"):
                self.sink.upsert(obj)
            elif kind == "DELETED":
                self.sink.delete(obj)
            elif kind != "BOOKMARK":
                log.warning("unknown watch event type", extra={"kind": self.kind, "type": kind})
        except Exception:
            # Skipping one object beats a loop that replays the same poison event forever.
            log.exception("could not apply a watch event", extra={"kind": self.kind, "type": kind})
        version = resource_version(obj)
        if version:
            self.resource_version = version
        counts[str(kind)] += 1
        return None

    def _flush_counts(self, counts: Counter[str]) -> None:
        if self.metrics is not None:
            for event_type, count in counts.items():
                self.metrics.watch_events.labels(self.kind, event_type).inc(count)
        counts.clear()
