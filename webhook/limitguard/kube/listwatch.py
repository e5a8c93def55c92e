"""The list/watch contract of a Reflector: the client it reads from, the sink it writes to, its
settings, the counters it feeds, and how a watch stream ends or fails."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from limitguard.errors import LimitguardError

KubeObject = Mapping[str, Any]


class WatchMetrics(Protocol):
    """The counters the reflector feeds (limitguard.http.metrics.Metrics has them)."""

    watch_restarts: Any
    relists: Any
    watch_events: Any
    watch_stalls: Any


class ListWatchClient(Protocol):
    def get(self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> Any: ...

    async def get_json(self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> Any: ...


@dataclass(frozen=True)
class KindSink:
    """Where one kind's objects go; the reflector knows nothing else about the state."""

    upsert: Callable[[KubeObject], str]  # applies an object, returns its key
    delete: Callable[[KubeObject], None]
    held_keys: Callable[[], set[str]]  # a fresh snapshot; a relist crosses off what it lists
    remove: Callable[[str], None]  # drop by key (relist cleanup)
    mark_synced: Callable[[bool], None]
    page_applied: Callable[[], None] = lambda: None  # e.g. keep the new records away from the GC
    caught_up: Callable[[], None] = lambda: None  # everything the server sent so far is applied


@dataclass(frozen=True)
class ReflectorSettings:
    page_size: int = 500  # client-go's default chunk size
    list_timeout_seconds: float = 60.0
    # Random in range (spreads reconnects, like client-go's 5-10 min) but short, so that a stream
    # that has not ended on time proves a dead path within 30 s; bookmarks alone come once a minute.
    watch_timeout_seconds: tuple[int, int] = (15, 20)
    watch_stall_grace_seconds: float = 8.0  # past timeoutSeconds: the stream is declared stalled
    connect_timeout_seconds: float = 10.0
    backoff_initial_seconds: float = 0.8
    backoff_max_seconds: float = 4.0  # after an outage, back within a few seconds of the apiserver
    unready_after_seconds: float = 60.0  # no refresh for this long: the state is marked not synced
    healthy_watch_seconds: float = 10.0  # a stream that lived this long resets the backoff
    slice_seconds: float = 0.004  # longest run of state work before yielding to the event loop


class WatchEnd(enum.Enum):
    CLOSED = "closed"  # the server ended the stream (timeoutSeconds) or the connection dropped
    GONE = "gone"  # 410: our resourceVersion is compacted away, relist
    STALLED = "stalled"  # open past timeoutSeconds + grace with nothing said: a dead path


class ProtocolError(LimitguardError):
    """An answer that is not what the API server sends (not a list object, an ERROR event)."""


class WatchErrorEvent(ProtocolError):
    """An ERROR event other than 410 (e.g. 500 from the storage layer): restart after a backoff."""


def resource_version(obj: Any) -> str | None:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    version = metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None
    return str(version) if version else None
