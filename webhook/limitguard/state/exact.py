"""The node table's exact path: columns of Python integers wherever int64 cannot be exact.

The table's int64 columns answer every question whose values stay within their exact range
(state.columns.BOUND). A value past it (a 16 PiB allocatable, a pod limit of 2**60, a ratio or a
weight whose product passes int64) or a resource past MAX_COLUMNS has no int64 column to compute
with; for those the query runs over an ExactTable instead: the rows it reads (every row, or the
extender's candidates), each column as numpy object arrays of Python integers, each field built
when first read. A field of an int64 column is converted as it is (its values are exact); a `wide`
or unmirrored column's comes from the same exact sources the int64 columns are copied from (each
row's node record and the state's per-node sums). The vector code runs unchanged over them: numpy
applies Python's exact integer arithmetic element by element, so the answer is exact, only slower.
Callers never choose: the scans and the scorers fall back to it themselves. Nothing of it is kept,
so nothing grows with the rows, and a query reads only the columns and fields it uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from limitguard.state.capacity import Capacity
from limitguard.state.columns import Column, SumSources
from limitguard.state.records import NodeRecord

_EMPTY: Mapping[str, int] = {}
_SUM_FIELDS = frozenset({"committed", "held", "scoring", "requested"})


class NodeTable(Protocol):
    """What the exact path reads of the node table (state.table.NodeTable is one)."""

    names: Sequence[str | None]
    records: Sequence[NodeRecord | None]
    sources: SumSources | None
    columns: Mapping[str, Column]
    alive: np.ndarray
    has_override: np.ndarray
    terminating: np.ndarray
    nominated: np.ndarray

    @property
    def size(self) -> int: ...


def _from_sources(table: NodeTable, resource: str, rows: list[int], field: str) -> np.ndarray:
    """*field* of *resource* for *rows*, from each row's record and the sums last synced."""
    values = []
    sums = getattr(table.sources, field) if field in _SUM_FIELDS and table.sources is not None else None
    for row in rows:
        record = table.records[row]
        if record is None:
            values.append(-1 if field == "override_pct" else 0)
        elif field in _SUM_FIELDS:
            name = table.names[row]
            values.append(sums.get(name, _EMPTY).get(resource, 0) if sums is not None and name else 0)
        else:
            allocatable = record.allocatable.get(resource, 0)
            override = record.ratio_override
            percent = override.get(resource) if override is not None else None
            if field == "allocatable":
                values.append(allocatable)
            elif field == "override_pct":
                values.append(-1 if percent is None else percent)
            else:  # override_cap
                values.append(0 if percent is None else allocatable * percent // 100)
    array = np.empty(len(values), object)
    array[:] = values
    return array


class ExactColumn:
    """One resource's column over an ExactTable's rows in Python integers; a field is built when
    first read (a scorer that reads only allocatable converts nothing else)."""

    wide = False
    mirrored = True

    def __init__(self, table: NodeTable, resource: str, index: np.ndarray) -> None:
        self._table = table
        self._resource = resource
        self._index = index

    def __getattr__(self, field: str) -> np.ndarray:  # called only for a field not built yet
        if field not in Column.FIELDS:
            raise AttributeError(field)
        column = self._table.columns.get(self._resource)
        if column is not None and column.mirrored and not column.wide:
            values = getattr(column, field)[self._index].astype(object)  # exact already: converted
        else:
            values = _from_sources(self._table, self._resource, self._index.tolist(), field)
        setattr(self, field, values)
        return values


class _ExactColumns(Mapping[str, ExactColumn]):
    """The table's columns as ExactColumns, each made when first asked for."""

    def __init__(self, table: NodeTable, index: np.ndarray) -> None:
        self._table = table
        self._index = index
        self._made: dict[str, ExactColumn] = {}

    def __getitem__(self, resource: str) -> ExactColumn:
        found = self._made.get(resource)
        if found is None:
            if resource not in self._table.columns:
                raise KeyError(resource)
            found = self._made[resource] = ExactColumn(self._table, resource, self._index)
        return found

    def __contains__(self, resource: object) -> bool:
        return resource in self._table.columns

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.columns)

    def __len__(self) -> int:
        return len(self._table.columns)


class ExactTable:
    """The rows *index* of the node table (every row, or the extender's candidates in order) as
    the scans and the scorers read them, renumbered 0..len(index)-1, in Python integers."""

    def __init__(self, table: NodeTable, index: np.ndarray | None = None) -> None:
        index = np.arange(table.size) if index is None else np.asarray(index, np.intp)
        self._table = table
        self.size = len(index)
        self.alive = table.alive[index]
        self.has_override = table.has_override[index]
        self.terminating = table.terminating[index]
        self.nominated = table.nominated[index]
        self.columns: Mapping[str, Any] = _ExactColumns(table, index)

    def capacity(self, resource: str, default: int | None) -> Capacity:
        found = Capacity.build(self, self.columns[resource], resource, default, exact=True)
        assert found is not None  # Python integers cannot overflow
        return found


def exact_capacity(table: NodeTable, resource: str, default: int | None) -> Capacity:
    """*resource*'s Capacity over every row, in Python integers (present, cap, free; not room)."""
    if resource not in table.columns:  # nothing anywhere: every capacity is 0
        zeros = np.zeros(table.size, object)
        present = np.zeros(table.size, bool) if default is None else table.alive & ~table.has_override
        return Capacity(resource, default, present, zeros, zeros, table.alive)
    return ExactTable(table).capacity(resource, default)


def exact_fit_mask(found: Capacity, amount: int, alive: np.ndarray) -> np.ndarray:
    """Rows (as many as *alive*, the rows holding a node) that take a limit of *amount* on
    *found*'s resource: the node does not check the resource, or the limit is within what is free."""
    rows = len(alive)
    return alive & (~found.present[:rows] | (found.free[:rows] >= amount))
