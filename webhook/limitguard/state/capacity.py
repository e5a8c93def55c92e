"""Limit capacity per node for one (resource, default ratio): kept current, not recomputed per query.

capacity = allocatable x percent // 100 with the node's override percent when it has a valid
annotation or a node pool, else the cluster default; `present` says whether the node checks the
resource at all; `free` = capacity - committed limits - ledger, the room a pod's limit must fit in.
The node table creates one the first time a query asks, then updates its rows on node and sum
changes.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from limitguard.state.columns import Column

SAFE_PRODUCT = 2**62  # allocatable x percent below this cannot overflow int64
UNCHECKED_ROOM = np.iinfo(np.int64).max  # `room` of a node that does not check the resource
NO_ROOM = -1  # `room` of a row without a node: no limit fits it (limits are > 0)


class NodeRows(Protocol):
    """What a capacity reads of the node table besides the resource's column: which rows hold a
    node, and which nodes have a ratio map of their own (the NodeTable is one). A protocol, so this
    module needs nothing from the table's."""

    alive: np.ndarray
    has_override: np.ndarray


class Capacity:
    __slots__ = ("_at_largest", "_largest", "cap", "default", "free", "present", "resource", "room")

    def __init__(
        self,
        resource: str,
        default: int | None,
        present: np.ndarray,
        cap: np.ndarray,
        free: np.ndarray,
        alive: np.ndarray,
    ):
        self.resource = resource
        self.default = default  # the cluster default percent for the resource; None: not in the map
        self.present = present  # bool: the node checks the resource
        self.cap = cap  # int64: limit capacity
        self.free = free  # int64: capacity - committed - held
        # int64: free where the node checks the resource, the largest int64 where it does not, -1
        # where there is no node: a pod's limit fits a row exactly when limit <= room, so a scan
        # needs one comparison per resource and no mask of live rows
        self.room = np.where(present, free, UNCHECKED_ROOM)
        self.room[~alive] = NO_ROOM
        self._largest: int | None = None  # max(room), and how many rows have it; None: not known
        self._at_largest = 0

    @property
    def nbytes(self) -> int:
        """What its arrays hold (a memo's byte budget counts it)."""
        return self.present.nbytes + self.cap.nbytes + self.free.nbytes + self.room.nbytes

    def largest_room(self) -> int:
        """The most room any row has. A limit above it fits no node, eligible or not: a pod that
        fits nowhere (a full cluster, the case this check exists for) costs one comparison instead
        of a scan of every row. Kept across row updates; worked out again only after the last row
        holding it lost room, or after a batch update."""
        if self._largest is None:
            largest = int(self.room.max()) if len(self.room) else NO_ROOM
            self._largest, self._at_largest = largest, int(np.count_nonzero(self.room == largest))
        return self._largest

    def _set_room(self, row: int, room: int) -> None:
        largest = self._largest
        if largest is not None:
            was = int(self.room[row])
            if room > largest:
                self._largest, self._at_largest = room, 1
            elif room == largest and was != largest:
                self._at_largest += 1
            elif was == largest and room != largest:
                self._at_largest -= 1
                if not self._at_largest:
                    self._largest = None
        self.room[row] = room

    @classmethod
    def build(
        cls, table: NodeRows, column: Column, resource: str, default: int | None, *, exact: bool = False
    ) -> Capacity | None:
        """Whole arrays at once; None when int64 cannot hold the products exactly (*exact*: the
        column holds Python integers, state.exact, and any product is exact)."""
        overridden = table.has_override
        own = column.override_pct >= 0
        if default is None:
            present = overridden & own
            cap = np.where(overridden, column.override_cap, 0)
        else:
            largest = int(np.abs(column.allocatable).max()) if len(column.allocatable) else 0
            if not exact and (default < 0 or largest * default >= SAFE_PRODUCT):
                return None
            present = ~overridden | own
            cap = np.where(overridden, column.override_cap, column.allocatable * default // 100)
        present &= table.alive
        cap = np.where(table.alive, cap, 0)
        return cls(resource, default, present, cap, cap - column.committed - column.held, table.alive)

    def update_row(self, table: NodeRows, column: Column, row: int) -> None:
        """Recompute one row from the table's current values (a node or its sums changed)."""
        if not table.alive[row]:
            self.present[row] = False
            self.cap[row] = self.free[row] = 0
            self._set_room(row, NO_ROOM)
            return
        if table.has_override[row]:
            present = int(column.override_pct[row]) >= 0
            cap = int(column.override_cap[row])
        else:
            present = self.default is not None
            cap = int(column.allocatable[row]) * self.default // 100 if self.default is not None else 0
        self.present[row] = present
        self.cap[row] = cap
        self.free[row] = free = cap - int(column.committed[row]) - int(column.held[row])
        self._set_room(row, free if present else UNCHECKED_ROOM)

    def update_free(self, column: Column, rows: np.ndarray) -> None:
        self.free[rows] = free = self.cap[rows] - column.committed[rows] - column.held[rows]
        self.room[rows] = np.where(self.present[rows], free, UNCHECKED_ROOM)
        self._largest = None
