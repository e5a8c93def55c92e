"""events.k8s.io/v1 Events for transitions, grouped into series as client-go's tools/events does.

Facts from k8s.io/client-go `tools/events/event_broadcaster.go` and `event_recorder.go`, and the
apiserver's `pkg/apis/core/validation/events.go`:

- two events are the same occurrence repeated when their type, action, reason, reporting controller
  and instance, regarding and related objects are equal (the note is not compared);
- the first is created; the second turns it into a series (count 2, lastObservedTime) with a
  strategic merge patch, or creates it with its series when the first is gone; later repeats only
  count up, written when the series is refreshed (every 30 minutes) or finished (6 minutes after
  its last repeat, the final count); an unrepeated event is forgotten after those 6 minutes;
- an event is named `<regarding name>.<time in nanoseconds, hex>`; one about a cluster-scoped
  object (a Node) goes to the `default` namespace; reason and action at most 128 characters, the
  note at most 1024.

Every write goes through the one queue of cluster writes and its rate limit; a series' writes
coalesce there (a queued write of an event is replaced by a newer one of the same event).
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from limitguard.clock import Clock
from limitguard.core.reports.policyreport import ObjectRef
from limitguard.core.text import clip
from limitguard.kube.client import ApiError
from limitguard.kube.reports.restapi import EventRest
from limitguard.kube.writes import ClusterWrites, Outcome, Perform, Permit

CONTROLLER = "limitguard.io/limitguard"
FINISH_SECONDS = 6 * 60.0  # client-go finishTime
REFRESH_SECONDS = 30 * 60.0  # client-go refreshTime
NOTE_LIMIT = 1024
WRITE_KIND = "event"
NORMAL, WARNING = "Normal", "Warning"

EventKey = tuple[str, str, str, tuple[str, str, str, str, str]]


def micro_time(seconds: float) -> str:
    """metav1.MicroTime as JSON: RFC 3339 with microseconds, UTC."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _Occurrence:
    event: dict[str, Any]
    first_seen: float  # on the monotonic clock
    count: int = 1
    last_seen: float = 0.0
    last_observed: str = ""  # MicroTime of the last repeat
    refreshed: float = 0.0
    created: bool = False  # the apiserver holds it: a series is a patch

    def series(self) -> dict[str, Any] | None:
        return {"count": self.count, "lastObservedTime": self.last_observed} if self.count > 1 else None


@dataclass
class EventRecorder:
    rest: EventRest
    writes: ClusterWrites
    clock: Clock
    wall: Callable[[], float]  # wall-clock seconds for eventTime and names (time.time)
    instance: str  # reportingInstance: this replica
    recorded: Counter[str] = field(default_factory=Counter)  # by reason, repeats included
    _open: dict[EventKey, _Occurrence] = field(default_factory=dict)
    _names: set[str] = field(default_factory=set)

    def record(self, regarding: ObjectRef, type_: str, reason: str, action: str, note: str) -> None:
        ref = (regarding.api_version, regarding.kind, regarding.namespace, regarding.name, regarding.uid)
        key: EventKey = (type_, action, reason, ref)
        self.recorded[reason] += 1
        now = self.clock.now()
        occurrence = self._open.get(key)
        if occurrence is not None:
            occurrence.count += 1
            occurrence.last_seen = now
            occurrence.last_observed = micro_time(self.wall())
            if occurrence.count == 2:  # the second makes it a series: written now; later ones wait
                occurrence.refreshed = now
                self._submit(occurrence)
            return
        occurrence = _Occurrence(self._event(regarding, type_, reason, action, note), now, last_seen=now)
        self._open[key] = occurrence
        self._submit(occurrence)

    def tick(self) -> None:
        """Finish series quiet for FINISH_SECONDS (writing their final count), refresh the others,
        forget single events past it."""
        now = self.clock.now()
        for key, occurrence in list(self._open.items()):
            if occurrence.count > 1:
                if now - occurrence.last_seen > FINISH_SECONDS:
                    self._submit(occurrence)
                    del self._open[key]
                elif now - occurrence.refreshed >= REFRESH_SECONDS:
                    occurrence.refreshed = now
                    self._submit(occurrence)
            elif now - occurrence.first_seen > FINISH_SECONDS:
                del self._open[key]

    def open_series(self) -> int:
        return sum(1 for occurrence in self._open.values() if occurrence.count > 1)

    def _event(self, regarding: ObjectRef, type_: str, reason: str, action: str, note: str) -> dict[str, Any]:
        seconds = self.wall()
        nanos = int(seconds * 1e9)
        name = f"{regarding.name}.{nanos:x}"
        while name in self._names:  # two events of one object in one nanosecond (a frozen test clock)
            nanos += 1
            name = f"{regarding.name}.{nanos:x}"
        self._names.add(name)
        if len(self._names) > 10_000:
            self._names = {name}
        return {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": regarding.namespace or "default"},
            "eventTime": micro_time(seconds),
            "reportingController": CONTROLLER,
            "reportingInstance": self.instance[:128],
            "action": action,
            "reason": reason,
            "regarding": regarding.to_dict(),
            "note": clip(note, NOTE_LIMIT),
            "type": type_,
        }

    def _submit(self, occurrence: _Occurrence) -> None:
        metadata = occurrence.event["metadata"]
        self.writes.submit(WRITE_KIND, (metadata["namespace"], metadata["name"]), self._perform(occurrence))

    def _perform(self, occurrence: _Occurrence) -> Perform:
        async def perform(permit: Permit) -> Outcome:
            series = occurrence.series()
            metadata = occurrence.event["metadata"]
            if occurrence.created and series is None:
                return Outcome.UNCHANGED
            await permit()
            try:
                if occurrence.created:
                    await self.rest.patch(metadata["namespace"], metadata["name"], {"series": series})
                    return Outcome.WRITTEN
                await self.rest.create({**occurrence.event, **({"series": series} if series else {})})
            except ApiError as error:
                if error.status == 404 and occurrence.created:  # expired meanwhile: create it again
                    occurrence.created = False
                    return Outcome.CONFLICT
                if error.status == 409:  # created twice: the patch follows
                    occurrence.created = True
                    return Outcome.CONFLICT
                if error.status in (400, 403, 422):
                    return Outcome.REJECTED
                raise
            occurrence.created = True
            return Outcome.WRITTEN

        return perform
