"""What placement reads of the state: which resources are ratio'd, and every node's limit room.

The room labels (limitguard.core.roomlabels) say, per node and ratio'd resource, the node table's
`room`: limit capacity less counted limits and what the ledger holds, the largest int64 where the
node does not check the resource. The labeller compares those columns, and each row's upsert
sequence, between two looks (vector operations): a burst of bindings costs it a few array
comparisons, not a pass over the nodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from limitguard.core.roomlabels import NodeRoom
from limitguard.state.capacity import UNCHECKED_ROOM, Capacity
from limitguard.state.records import NodeRecord
from limitguard.state.scan import capacity
from limitguard.state.store import ClusterState
from limitguard.state.table import NodeTable


class RatioedResources:
    """The resources some node checks: the cluster default map's, and those of every node's own map
    (its annotation's or its pool's). Counted again only for nodes whose record changed since the
    last look (records are replaced, never modified, so identity says it)."""

    def __init__(self, default_ratios: Mapping[str, int]) -> None:
        self._default = frozenset(default_ratios)
        self._seen: dict[str, tuple[NodeRecord, frozenset[str]]] = {}
        self._counts: Counter[str] = Counter()

    def update(self, state: ClusterState) -> frozenset[str]:
        seen, counts = self._seen, self._counts
        present: set[str] = set()
        for record in state.nodes():
            name = record.name
            present.add(name)
            before = seen.get(name)
            if before is not None and before[0] is record:
                continue
            keys = frozenset(record.ratio_override or ())
            if before is not None:
                counts.subtract(before[1])
            counts.update(keys)
            seen[name] = (record, keys)
        for name in [name for name in seen if name not in present]:
            counts.subtract(seen.pop(name)[1])
        return self._default | {resource for resource, count in counts.items() if count > 0}


@dataclass(frozen=True)
class RoomColumns:
    """Per ratio'd resource, the node table's room and capacity columns at one look (copies)."""

    rows: int  # the table's high-water mark: rows past it hold no node
    seq: np.ndarray  # each row's upsert sequence: changes when its node (or the row's node) changes
    room: dict[str, np.ndarray]
    cap: dict[str, np.ndarray]
    inexact: frozenset[str]  # resources whose capacity the table cannot hold exactly (not labelled)

    def changed_rows(self, before: RoomColumns | None) -> np.ndarray:
        """The rows whose node, room or capacity differs from *before* (every row when there is none,
        or when the resources or the table's size changed). A node's record changes with its labels
        and taints, so a label someone else changed is looked at again too."""
        if before is None or before.room.keys() != self.room.keys() or before.rows != self.rows:
            return np.arange(self.rows)
        changed = self.seq != before.seq
        for resource, room in self.room.items():
            changed |= room != before.room[resource]
            changed |= self.cap[resource] != before.cap[resource]
        return np.flatnonzero(changed)

    def at(self, row: int) -> dict[str, NodeRoom]:
        """One row's room per resource (room None: the node does not check the resource)."""
        found = {}
        for resource, room in self.room.items():
            value = int(room[row])
            found[resource] = NodeRoom(
                None if value == UNCHECKED_ROOM else value, int(self.cap[resource][row])
            )
        return found


def room_columns(
    table: NodeTable, resources: frozenset[str], default_ratios: Mapping[str, int]
) -> RoomColumns:
    """The current room of every node for each of *resources* (the table synced by the caller)."""
    rows = table.high_water
    room, cap, inexact = {}, {}, set()
    for resource in sorted(resources):
        found: Capacity | None = capacity(table, resource, default_ratios)
        if found is None:
            inexact.add(resource)
            continue
        room[resource] = found.room[:rows].copy()
        cap[resource] = found.cap[:rows].copy()
    return RoomColumns(rows, table.seq[:rows].copy(), room, cap, frozenset(inexact))


def live_rows(table: NodeTable, rows: np.ndarray) -> Iterator[tuple[int, str]]:
    """(row, node name) of the rows that hold a node."""
    names = table.names
    for row in rows.tolist():
        name = names[row]
        if name is not None:
            yield row, name


def node_rooms(
    table: NodeTable, name: str, resources: frozenset[str], default_ratios: Mapping[str, int]
) -> dict[str, NodeRoom] | None:
    """One node's room per resource now (resources the table cannot hold exactly left out); None
    when the table has no such node."""
    row = table.rows.get(name)
    if row is None:
        return None
    found = {}
    for resource in sorted(resources):
        column = capacity(table, resource, default_ratios)
        if column is not None:
            value = int(column.room[row])
            found[resource] = NodeRoom(None if value == UNCHECKED_ROOM else value, int(column.cap[row]))
    return found
