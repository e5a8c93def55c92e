"""The leader's room labels and full-node taints: which nodes to write, and each write.

Every `interval` the labeller looks at the node table's room columns (limitguard.state.placement)
and, for each node whose room, capacity or record changed since the last look, compares what its
labels and taint should say (limitguard.core.roomlabels) with what the watch shows. A difference is
queued in the one queue of cluster writes (limitguard.kube.writes): per node at most one label
write and one taint write wait, a newer one replacing the older; a node's first labels (a node just
added, which no hint matches until then) go first, then writes that lower a label or add the taint,
all under `clusterWrites`' rate. A write reads the newest room when its turn comes.

It runs only on the leader (limitguard.kube.leaderwork). A new leader starts by comparing every
node with what the watch shows, so it writes only what differs: a leader change does not rewrite
the cluster. Labels are a map, so a label write is a JSON merge patch of limitguard's own keys;
`spec.taints` is a list without a merge key, so a taint write replaces the whole list, with the
node's resourceVersion as a precondition (as upstream's PatchNodeTaints does), and a taint another
writer added meanwhile survives: the apiserver answers 409 and the write reads the node again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from limitguard.clock import Clock
from limitguard.core.config import Config
from limitguard.core.hints import labels_meant
from limitguard.core.roomlabels import (
    FullThreshold,
    NodeRoom,
    desired_labels,
    has_full_taint,
    lowers_room,
    own_labels,
    taint_patch,
    taints_with,
    wants_full_taint,
)
from limitguard.kube.client import ApiError
from limitguard.kube.nodeapi import MERGE_PATCH, STRATEGIC_MERGE_PATCH, NodeApi
from limitguard.kube.writes import ClusterWrites, Outcome, Permit
from limitguard.state.placement import RatioedResources, RoomColumns, live_rows, node_rooms, room_columns
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

LABELS = "node-room-labels"  # the kinds of write, as the metrics name them
TAINT = "node-full-taint"
LOOK_SECONDS = 0.2
# What limitguard last wrote to a node's labels stands for them until the watch shows it, or this
# long (a label someone else changed meanwhile is then seen and written again).
SENT_SECONDS = 30.0
TAINT_ATTEMPTS = 3  # reads and patches of one taint write before it is retried later (409 each time)
# Every node compared again this often (as an informer's resync): a label changed by someone else
# while this leader's own write of it was still on its way is corrected by then at the latest.
RESYNC_SECONDS = 300.0
SLICE = 500  # nodes looked at between two yields to the event loop


class RoomLabeller:
    def __init__(
        self,
        state: ClusterState,
        config: Config,
        writes: ClusterWrites,
        nodes: NodeApi,
        clock: Clock,
        look_seconds: float = LOOK_SECONDS,
    ) -> None:
        self.state = state
        self.config = config
        self.writes = writes
        self.nodes = nodes
        self.clock = clock
        self.look_seconds = look_seconds
        self._default = config.limit_aware.default_ratios
        avoid = config.placement_hints.avoid_full_nodes
        self._threshold = FullThreshold(avoid.below, avoid.hysteresis) if avoid.enabled else None
        self._ratioed = RatioedResources(self._default)
        self._resources: frozenset[str] = frozenset()
        self._layout: int | None = None  # the node table's layout_version at the last look
        self._before: RoomColumns | None = None
        self._sent: dict[str, tuple[dict[str, str], float]] = {}
        # node -> when its labels first differed from its room (a write is queued for it)
        self._stale_since: dict[str, float] = {}
        self._refused_logged = False
        self._resync_at = 0.0

    # -- the leader's loop --------------------------------------------------------------------------
    async def run(self) -> None:
        """Look every `look_seconds` until cancelled (leadership lost): a fresh start each time."""
        self._before, self._layout, self._resync_at = None, None, 0.0
        self._sent.clear()
        self._stale_since.clear()
        while True:
            await self.look()
            await self.clock.sleep(self.look_seconds)

    async def look(self) -> int:
        """Compare the nodes that changed since the last look; returns how many were compared."""
        state = self.state
        if not state.ready:
            return 0
        table = state.node_table()
        if self.clock.now() >= self._resync_at:
            self._before, self._resync_at = None, self.clock.now() + RESYNC_SECONDS
        if table.layout_version != self._layout:
            resources = self._ratioed.update(state) if labels_meant(self.config) else frozenset()
            self._resources = resources
            self._layout = table.layout_version
            for name in [name for name in self._stale_since if state.node(name) is None]:
                del self._stale_since[name]
        columns = room_columns(table, self._resources, self._default)
        targets = list(live_rows(table, columns.changed_rows(self._before)))
        self._before = columns
        for index, (row, name) in enumerate(targets):
            self._compare(name, columns.at(row))
            if index % SLICE == SLICE - 1:
                await asyncio.sleep(0)
        return len(targets)

    def _compare(self, name: str, rooms: Mapping[str, NodeRoom]) -> None:
        record = self.state.node(name)
        if record is None:
            return
        desired = desired_labels(rooms)
        known = self._known(name, own_labels(record.traits.labels))
        if desired != known:
            self._stale_since.setdefault(name, self.clock.now())
            self.writes.submit(
                LABELS,
                name,
                partial(self._write_labels, name),
                urgent=lowers_room(known, desired),
                first=not known,  # a node without labels (just added) matches no hint until written
            )
        else:
            self._stale_since.pop(name, None)
        tainted = has_full_taint(record.traits.taints)
        wanted = self._wants_taint(tainted, rooms)
        if wanted != tainted:
            self.writes.submit(TAINT, name, partial(self._write_taint, name), urgent=wanted)

    def _wants_taint(self, tainted: bool, rooms: Mapping[str, NodeRoom]) -> bool:
        return self._threshold is not None and wants_full_taint(tainted, rooms.values(), self._threshold)

    def _known(self, name: str, observed: dict[str, str]) -> dict[str, str]:
        """What the node's room labels are: the watch's, or what this leader last wrote until the
        watch shows it (the answer to a patch comes before its watch event)."""
        sent = self._sent.get(name)
        if sent is None:
            return observed
        labels, at = sent
        if labels == observed or self.clock.now() - at > SENT_SECONDS:
            del self._sent[name]
            return observed
        return labels

    def _rooms_now(self, name: str) -> dict[str, NodeRoom] | None:
        return node_rooms(self.state.node_table(), name, self._resources, self._default)

    # -- the writes ---------------------------------------------------------------------------------
    async def _write_labels(self, name: str, permit: Permit) -> Outcome:
        record = self.state.node(name)
        rooms = self._rooms_now(name)
        if record is None or rooms is None:
            self._stale_since.pop(name, None)
            return Outcome.GONE
        desired = desired_labels(rooms)
        observed = own_labels(record.traits.labels)
        if desired == self._known(name, observed):
            self._stale_since.pop(name, None)
            return Outcome.UNCHANGED
        # Every key of limitguard's written out, and every other of its keys removed: idempotent.
        changes: dict[str, str | None] = {key: None for key in observed}
        changes.update(desired)
        await permit()
        try:
            answer = await self.nodes.patch(name, {"metadata": {"labels": changes}}, MERGE_PATCH)
        except ApiError as error:
            return self._refused(name, LABELS, error)
        labels = (answer.get("metadata") or {}).get("labels") or {}
        self._sent[name] = (own_labels(labels), self.clock.now())
        if own_labels(labels) == desired:
            self._stale_since.pop(name, None)
        return Outcome.WRITTEN

    async def _write_taint(self, name: str, permit: Permit) -> Outcome:
        for attempt in range(TAINT_ATTEMPTS):
            node = await self.nodes.get(name, from_cache=attempt == 0)
            rooms = self._rooms_now(name)
            if node is None or rooms is None:
                return Outcome.GONE
            taints: list[Any] = [
                t for t in (node.get("spec") or {}).get("taints") or () if isinstance(t, dict)
            ]
            wanted = self._wants_taint(has_full_taint(taints), rooms)
            new = taints_with(taints, wanted)
            if new is None:
                return Outcome.UNCHANGED
            version = str((node.get("metadata") or {}).get("resourceVersion") or "")
            await permit()
            try:
                await self.nodes.patch(name, taint_patch(version, new), STRATEGIC_MERGE_PATCH)
            except ApiError as error:
                if error.status == 409:
                    continue  # the node changed since it was read: read it again
                return self._refused(name, TAINT, error)
            return Outcome.WRITTEN
        return Outcome.CONFLICT

    def _refused(self, name: str, kind: str, error: ApiError) -> Outcome:
        if error.status == 404:
            self._stale_since.pop(name, None)
            return Outcome.GONE
        if error.status == 409:
            return Outcome.CONFLICT
        # 403 (no RBAC for it, or the ValidatingAdmissionPolicy refused), 422, 5xx: retried later;
        # logged at warning once, then at debug (every node would say the same).
        level = logging.DEBUG if self._refused_logged else logging.WARNING
        self._refused_logged = True
        log.log(level, "node write refused", extra={"kind": kind, "node": name, "error": str(error)})
        return Outcome.FAILED

    # -- what the metrics read ---------------------------------------------------------------------
    def stalest_seconds(self) -> float:
        """How long the node whose labels have differed from its room the longest has waited."""
        if not self._stale_since:
            return 0.0
        return max(0.0, self.clock.now() - min(self._stale_since.values()))
