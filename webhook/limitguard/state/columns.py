"""The node table's int64 columns, and how sums are copied into them.

Exactness: every value is an exact integer. int64 holds any value up to BOUND (2**53, 8 PiB in
bytes) with room for the arithmetic done on it (sums of three, times 100); a column that ever
holds a larger magnitude is marked `wide` and queries touching it use the exact path (state.exact:
the same column in Python integers, built from the records and the state's sums).

Boundedness: a column costs 7 int64 arrays over every row (57 KB at 1,000 nodes, 0.9 MB at 15,000),
and resource names come from input (node allocatable, ratio annotations, pod limits). The table
mirrors at most MAX_COLUMNS resources; any further name gets UNMIRRORED, a column without arrays
that is always `wide`, so every query touching it takes the exact path (state.exact, built from the
state's exact dict sums for that query only): still exact, only slower, and no memory kept over the rows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from limitguard.core.text import clip

log = logging.getLogger(__name__)

BOUND = 2**53
# Real nodes expose under 20 resource names (cpu, memory, ephemeral-storage, pods, hugepages, a few
# extended resources; Koordinator adds about 6 batch/mid ones): 64 leaves room for any mix of them.
MAX_COLUMNS = 64
FEW_ROWS = 4  # up to this many dirty rows are written one by one, not through an index array


def exact(value: int) -> bool:
    """Can *value* be held and computed with in the table's int64 arrays?"""
    return -BOUND <= value <= BOUND


class Column:
    """One resource: its arrays over the node rows."""

    __slots__ = (
        "allocatable",
        "committed",
        "held",
        "mirrored",
        "override_cap",
        "override_pct",
        "requested",
        "scoring",
        "wide",
    )
    FIELDS = ("allocatable", "override_pct", "override_cap", "committed", "held", "scoring", "requested")

    def __init__(self, size: int) -> None:
        self.allocatable = np.zeros(size, np.int64)
        self.override_pct = np.full(size, -1, np.int64)  # -1: the node's override has no ratio for it
        self.override_cap = np.zeros(size, np.int64)  # allocatable x override percent // 100
        self.committed = np.zeros(size, np.int64)  # limits of the bound active pods
        self.held = np.zeros(size, np.int64)  # the binding ledger
        self.scoring = np.zeros(size, np.int64)  # limits with the non-zero defaults (scoring)
        self.requested = np.zeros(size, np.int64)  # requests with the non-zero defaults (scoring)
        self.wide = False
        self.mirrored = True  # False only for UNMIRRORED: nothing is written to it

    def grow(self, size: int) -> None:
        if not self.mirrored:
            return
        for name in self.FIELDS:
            old = getattr(self, name)
            new = np.full(size, -1 if name == "override_pct" else 0, np.int64)
            new[: len(old)] = old
            setattr(self, name, new)


def _unmirrored() -> Column:
    column = Column(0)
    column.wide = True
    column.mirrored = False
    return column


#: The column of every resource past MAX_COLUMNS: present (some node or pod has it), never exact.
UNMIRRORED = _unmirrored()


def new_column(columns: dict[str, Column], resource: str, size: int) -> Column:
    """Add *resource* to *columns*: a column of *size* rows, or UNMIRRORED past MAX_COLUMNS."""
    mirrored = sum(1 for column in columns.values() if column.mirrored)
    if mirrored < MAX_COLUMNS:
        column = columns[resource] = Column(size)
        return column
    if mirrored == len(columns):  # the first name past the cap: said once
        log.warning(
            "node table: %d resources have columns; %s and any further resource use the exact path",
            MAX_COLUMNS,
            clip(repr(resource)),
        )
    columns[resource] = UNMIRRORED
    return UNMIRRORED


@dataclass(frozen=True, slots=True)
class SumSources:
    """The state's live per-node maps that the table copies its sums from (read here, never written)."""

    committed: Mapping[str, Mapping[str, int]]
    held: Mapping[str, Mapping[str, int]]  # the binding ledger's totals
    scoring: Mapping[str, Mapping[str, int]]
    requested: Mapping[str, Mapping[str, int]]
    terminating: Mapping[str, int]
    nominated: Mapping[str, int]


@dataclass(slots=True)
class DirtyRows:
    """Nodes whose sums are to be copied: their names (keys of the sources) and table rows."""

    names: list[str]
    rows: list[int]
    _index: np.ndarray | None = None

    def index(self) -> np.ndarray:
        if self._index is None:
            self._index = np.array(self.rows, np.intp)
        return self._index


def write_rows(target: np.ndarray, dirty: DirtyRows, values: list[int]) -> None:
    """target[row] = value for each dirty row and its value."""
    if len(values) <= FEW_ROWS:  # the steady state: a pod event or a binding since the last query
        for row, value in zip(dirty.rows, values, strict=True):
            target[row] = value
    else:  # thousands of rows after a burst: one C loop
        target[dirty.index()] = values


def copy_sums(
    columns: dict[str, Column],
    size: int,
    field: str,
    dirty: DirtyRows,
    source: Mapping[str, Mapping[str, int]],
) -> None:
    """Write each dirty row's *field* sums from *source* (node -> resource -> amount) into the
    *columns* of *size* rows, adding a column for a resource first seen (new_column): a resource
    absent from a node's map is 0 there, and a sum past BOUND widens its column."""
    empty: Mapping[str, int] = {}
    amounts_of_rows = [source.get(name, empty) for name in dirty.names]
    for amounts in amounts_of_rows:
        for resource in amounts:
            if resource not in columns:
                new_column(columns, resource, size)
    for resource, column in columns.items():
        if not column.mirrored:
            continue
        values = [amounts.get(resource, 0) for amounts in amounts_of_rows]
        if min(values) < -BOUND or max(values) > BOUND:  # not all exact()
            column.wide = True
            values = [0] * len(values)
        write_rows(getattr(column, field), dirty, values)
