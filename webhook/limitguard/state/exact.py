"""The node table's exact path: a column of Python integers wherever int64 cannot be exact.

The table's int64 columns answer every question whose values stay within their exact range
(state.columns.BOUND). A value past it (a 16 PiB allocatable, a pod limit of 2**60, a ratio whose
product passes int64) or a resource past MAX_COLUMNS has no int64 column to read; for those the
table builds, on the query that needs it, the same column as numpy object arrays of Python
integers, from the same exact sources the int64 columns are copied from (each node's record and
the state's per-node sums). The vector code runs unchanged over them: numpy applies Python's
exact integer arithmetic element by element, so the answer is exact, only slower. Callers never
choose: `exact_capacity` and `ExactTable` are what the scans and the scorers fall back to
themselves. Nothing of it is kept, so nothing grows with the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from limitguard.state.capacity import Capacity
from limitguard.state.columns import Column, SumSources
from limitguard.state.records import NodeRecord


class NodeTable(Protocol):
    """What the exact path reads of the node table (state.table.NodeTable is one)."""

    rows: Mapping[str, int]
    records: Sequence[NodeRecord | None]
    sources: SumSources | None
    columns: Mapping[str, Column]
    alive: np.ndarray
    has_override: np.ndarray

    @property
    def size(self) -> int: ...


_EMPTY: Mapping[str, int] = {}


def _objects(values: list[int]) -> np.ndarray:
    array = np.empty(len(values), object)
    array[:] = values
    return array


def exact_column(table: NodeTable, resource: str) -> Column:
    """*resource*'s column over every row of *table* as Python integers, from the exact sources:
    each row's node record (allocatable, ratio map) and the sums the table was last synced from."""
    column = Column(0)
    sources = table.sources
    size = table.size
    allocatable, override_pct, override_cap = [0] * size, [-1] * size, [0] * size
    sums: dict[str, list[int]] = {
        field: [0] * size for field in ("committed", "held", "scoring", "requested")
    }
    for name, row in table.rows.items():
        record = table.records[row]
        if record is None:
            continue
        amount = record.allocatable.get(resource, 0)
        allocatable[row] = amount
        override = record.ratio_override
        percent = override.get(resource) if override is not None else None
        if percent is not None:
            override_pct[row] = percent
            override_cap[row] = amount * percent // 100
        if sources is not None:
            for field, values in sums.items():
                values[row] = getattr(sources, field).get(name, _EMPTY).get(resource, 0)
    column.allocatable = _objects(allocatable)
    column.override_pct = _objects(override_pct)
    column.override_cap = _objects(override_cap)
    for field, values in sums.items():
        setattr(column, field, _objects(values))
    return column


def exact_capacity(table: NodeTable, resource: str, default: int | None) -> Capacity:
    """*resource*'s Capacity as Python integers (present, cap, free: exact; room is not used)."""
    column = exact_column(table, resource)
    found = Capacity.build(table, column, resource, default, exact=True)
    assert found is not None  # Python integers cannot overflow
    return found


def exact_fit_mask(found: Capacity, amount: int, alive: np.ndarray) -> np.ndarray:
    """Rows (as many as *alive*, the rows holding a node) that take a limit of *amount* on
    *found*'s resource: the node does not check the resource, or the limit is within what is free."""
    rows = len(alive)
    return alive & (~found.present[:rows] | (found.free[:rows] >= amount))


class ExactTable:
    """The node table as the scorers read it, every column as Python integers (built once per
    query, for one where int64 cannot be exact). Everything else is the table's own."""

    def __init__(self, table: NodeTable) -> None:
        self._table = table
        self.columns: dict[str, Column] = {
            resource: exact_column(table, resource) for resource in table.columns
        }
        self.exact = True

    def capacity(self, resource: str, default: int | None) -> Capacity:
        column = self.columns.get(resource)
        if column is None:
            column = self.columns[resource] = exact_column(self._table, resource)
        found = Capacity.build(self._table, column, resource, default, exact=True)
        assert found is not None
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)
