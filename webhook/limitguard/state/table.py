"""A columnar mirror of the per-node sums: numpy int64 arrays, one row per node, one column per resource.

The dict sums of ClusterState stay the source of truth (and feed the exact path); this table mirrors
them so that a scan over every node (an unbound pod with no room, the extender's 5,000 candidates)
is a handful of vector operations instead of a Python loop. It is never rebuilt per request:
node events write their row at once, pod and ledger events only mark their node dirty, and the
next query copies the dirty rows from the dicts (a relist of 150,000 pods costs one batched copy;
a burst of bindings, only the ledger's totals). The columns and their exactness rule: state.columns.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from limitguard.core.eligibility import Taint
from limitguard.core.memo import Cleared, Memo, MiB
from limitguard.core.pools import DEFAULT, RatioSource
from limitguard.state.candidates import Candidates, kept_lists, names_key
from limitguard.state.capacity import SAFE_PRODUCT, Capacity
from limitguard.state.changelog import ChangeLog
from limitguard.state.columns import (
    FEW_ROWS,
    Column,
    DirtyRows,
    SumSources,
    copy_sums,
    exact,
    new_column,
    write_rows,
)
from limitguard.state.labelrows import LabelRows

if TYPE_CHECKING:
    from limitguard.state.records import NodeRecord

LAYOUT_MEMO_ENTRIES = 256  # distinct placements remembered between node changes
_SUM_FIELDS = ("committed", "held", "scoring", "requested")
_COUNT_FIELDS = ("terminating", "nominated")


class NodeTable:
    def __init__(self) -> None:
        self.rows: dict[str, int] = {}
        self.names: list[str | None] = []
        # each row's node record, and the sums last synced from: what the exact path (state.exact)
        # reads where a column cannot be exact in int64
        self.records: list[NodeRecord | None] = []
        self.sources: SumSources | None = None
        # each row's name as JSON string content (orjson, without the quotes), for answers naming hosts
        self.json_names = np.empty(0, object)
        self._free: list[int] = []
        self._size = 0
        # rows below this have been used; scans read [:high_water], not the tail the arrays grew into
        self.high_water = 0
        self.alive = np.zeros(0, bool)
        self.seq = np.zeros(0, np.int64)  # upsert order, which is the state's node iteration order
        self._next_seq = 0
        self.unschedulable = np.zeros(0, bool)
        self.has_override = np.zeros(0, bool)
        # where each row's ratio map came from, an index into ratio_sources (a handful: annotation,
        # default and one per node pool)
        self.ratio_source = np.zeros(0, np.int16)
        self.ratio_sources: list[RatioSource] = [DEFAULT]
        self._source_ids: dict[RatioSource, int] = {DEFAULT: 0}
        self.taint_set = np.zeros(0, np.int32)
        self.terminating = np.zeros(0, np.int64)
        self.nominated = np.zeros(0, np.int64)
        self.columns: dict[str, Column] = {}
        self._dirty: set[str] = set()  # nodes whose every sum may have changed (pod events, new rows)
        self._held_dirty: set[str] = set()  # nodes whose ledger total alone changed (bindings)
        # label key -> value -> rows; the eligibility masks are built from it
        self._labels = LabelRows()
        # distinct taint sets: id 0 is "no taints"
        self._taint_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_refs: list[int] = [0]
        self._name_rank: np.ndarray | None = None
        self._candidates = kept_lists(
            "candidate-rows"
        )  # the last lists resolved, cleared as nodes come or go
        # Policy: per (resource, cluster default percent), 64 capacities, 32 MiB of rows (a capacity
        # is 25 bytes a row; the keys come from columns and configuration, not from requests),
        # kept current row by row, all forgotten when the table grows.
        self._capacities: Memo[tuple[str, int | None], Capacity] = Memo(
            "capacities", entries=64, max_bytes=32 * MiB, cleared=Cleared.ON_CHANGE
        )
        # Answers that depend only on which nodes exist and their labels, taints and order (e.g. a
        # placement's eligible rows). Policy: per placement, LAYOUT_MEMO_ENTRIES answers, 16 MiB with
        # their masks, cleared when a node is added, changed or removed.
        self.layout_memo: Memo[Hashable, Any] = Memo(
            "placement-layouts", entries=LAYOUT_MEMO_ENTRIES, max_bytes=16 * MiB, cleared=Cleared.ON_CHANGE
        )
        self.layout_version = 0  # counts those changes (the room labeller looks again after one)
        # Changes whenever any row's node or sums may have changed: answers computed from the table
        # may be remembered under it (a burst of pods created between two bindings shares them).
        self.version = 0
        self._changes = ChangeLog()  # the rows each recent version changed

    # -- rows -------------------------------------------------------------------------------
    def _grow(self) -> None:
        size = max(64, self._size * 2)

        def widen(old: np.ndarray, fill: object = 0) -> np.ndarray:
            new = np.full(size, fill, old.dtype)
            new[: len(old)] = old
            return new

        self.alive = widen(self.alive, False)
        self.seq = widen(self.seq)
        self.unschedulable = widen(self.unschedulable, False)
        self.has_override = widen(self.has_override, False)
        self.ratio_source = widen(self.ratio_source)
        self.taint_set = widen(self.taint_set)
        self.terminating = widen(self.terminating)
        self.nominated = widen(self.nominated)
        for column in self.columns.values():
            column.grow(size)
        self.names.extend([None] * (size - self._size))
        self.records.extend([None] * (size - self._size))
        self.json_names = widen(self.json_names, None)
        self._free.extend(range(size - 1, self._size - 1, -1))
        self._size = size
        self._labels.grow(size)
        self._capacities.clear()
        self._layout_changed()
        self._changed(None)

    def _changed(self, rows: list[int] | None) -> None:
        """A new version, which changed *rows* (None: any row may have, or a column was added)."""
        self.version += 1
        self._changes.record(self.version, rows)

    def changed_since(self, version: int) -> list[int] | None:
        """The rows whose values changed after *version*, or None when that is not known: an answer
        computed at *version* is brought up to date by recomputing those rows alone."""
        return self._changes.since(version, self.version)

    def column(self, resource: str) -> Column:
        column = self.columns.get(resource)
        if column is None:
            column = new_column(self.columns, resource, self._size)
        return column

    @property
    def size(self) -> int:
        return self._size

    def mark(self, node: str) -> None:
        """The dict sums of *node* changed: copy them before the next query."""
        if node:
            self._dirty.add(node)

    def mark_held(self, node: str) -> None:
        """The ledger's total on *node* changed: copy that one sum before the next query. A burst of
        bindings dirties thousands of rows, and a quarter of the copying is then all there is to do."""
        self._held_dirty.add(node)

    def _layout_changed(self) -> None:
        self.layout_memo.clear()
        self.layout_version += 1

    def upsert_node(self, record: NodeRecord) -> None:
        """Write the node's own facts now (labels, taints, allocatable, ratios); sums on the next sync."""
        name = record.name
        self._layout_changed()
        columns = len(self.columns)
        row = self.rows.get(name)
        if row is None:
            if not self._free:
                self._grow()
            row = self._free.pop()
            self.high_water = max(self.high_water, row + 1)
            self.rows[name] = row
            self.names[row] = name
            self.json_names[row] = orjson.dumps(name)[1:-1]
            self.alive[row] = True
            self._nodes_changed()
        else:
            self._unindex(row)
        self.records[row] = record
        self.seq[row] = self._next_seq
        self._next_seq += 1
        traits = record.traits
        self.unschedulable[row] = traits.unschedulable
        self._index(row, traits.labels, traits.taints)
        override = record.ratio_override
        self.has_override[row] = override is not None
        self.ratio_source[row] = self._source_id(record.ratio_source)
        for resource in set(record.allocatable) | set(override or ()) | set(self.columns):
            column = self.column(resource)
            if not column.mirrored:
                continue  # judged by the exact path (state.columns.MAX_COLUMNS, state.exact)
            allocatable = record.allocatable.get(resource, 0)
            percent = override.get(resource) if override is not None else None
            capacity = allocatable * percent // 100 if percent is not None else 0
            if not (exact(allocatable) and exact(capacity) and (percent is None or exact(percent))):
                column.wide = True
                allocatable = capacity = 0
                percent = None
            column.allocatable[row] = allocatable
            column.override_pct[row] = -1 if percent is None else percent
            column.override_cap[row] = capacity
        self._refresh_capacities(row)
        self._dirty.add(name)
        self._changed([row] if len(self.columns) == columns else None)

    def remove_node(self, name: str) -> None:
        row = self.rows.pop(name, None)
        if row is None:
            return
        self._layout_changed()
        self._changed([row])
        self._unindex(row)
        self.alive[row] = False
        self.names[row] = None
        self.records[row] = None
        self.json_names[row] = None
        self.unschedulable[row] = self.has_override[row] = False
        self.ratio_source[row] = 0
        self.terminating[row] = self.nominated[row] = 0
        for column in self.columns.values():
            if not column.mirrored:
                continue
            for field in Column.FIELDS:
                getattr(column, field)[row] = -1 if field == "override_pct" else 0
        self._refresh_capacities(row)
        self._free.append(row)
        self._nodes_changed()

    def _source_id(self, source: RatioSource) -> int:
        found = self._source_ids.get(source)
        if found is None:
            found = self._source_ids[source] = len(self.ratio_sources)
            self.ratio_sources.append(source)
        return found

    def _nodes_changed(self) -> None:
        """A node came or went: caches of name -> row answers are stale."""
        self._name_rank = None
        self._candidates.clear()

    # -- limit capacity ---------------------------------------------------------------------
    def capacity(self, resource: str, default: int | None) -> Capacity | None:
        """The current Capacity of *resource* under the cluster *default* percent (None: not in the
        default map); None when the table cannot be exact for it (or has no such column)."""
        column = self.columns.get(resource)
        if column is None or column.wide:
            return None
        key = (resource, default)
        found = self._capacities.get(key)
        if found is None:
            found = Capacity.build(self, column, resource, default)
            if found is None:
                return None
            self._capacities.put(key, found, value_bytes=found.nbytes)
        return found

    def _refresh_capacities(self, row: int) -> None:
        for key, capacity in list(self._capacities.items()):
            column = self.columns[capacity.resource]
            allocatable = int(column.allocatable[row])
            if column.wide or (
                capacity.default is not None and abs(allocatable) * capacity.default >= SAFE_PRODUCT
            ):
                self._capacities.discard(key)
                continue
            capacity.update_row(self, column, row)

    # -- label and taint indexes ----------------------------------------------------------------
    def _index(self, row: int, labels: Mapping[str, str], taints: tuple[Taint, ...]) -> None:
        self._labels.index(row, labels)
        taint_id = self._taint_ids.get(taints)
        if taint_id is None:
            taint_id = self._taint_ids[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
            self._taint_refs.append(0)
        self._taint_refs[taint_id] += 1
        self.taint_set[row] = taint_id

    def _unindex(self, row: int) -> None:
        self._labels.unindex(row)
        self._taint_refs[int(self.taint_set[row])] -= 1
        self.taint_set[row] = 0

    def has_label(self, key: str) -> bool:
        """Whether some node carries the label *key* (whatever its value)."""
        return self._labels.has_key(key)

    @property
    def label_keys_version(self) -> int:
        """Changes whenever has_label's answer may have changed for some key."""
        return self._labels.keys_version

    def label_mask(self, key: str, value: str | None) -> np.ndarray:
        """Rows whose label *key* is *value* (None: rows that have the key at all)."""
        return self._labels.label_mask(key, value)

    def values_mask(self, key: str, test: Callable[[str], bool]) -> np.ndarray:
        """Rows whose label *key* has a value passing *test* (one call per distinct value)."""
        return self._labels.values_mask(key, test)

    def name_mask(self, names: Iterable[str]) -> np.ndarray:
        return self._labels.rows_mask([{self.rows[name] for name in names if name in self.rows}])

    def live_taint_sets(self) -> list[tuple[int, tuple[Taint, ...]]]:
        return [(i, taints) for i, taints in enumerate(self.taint_sets) if self._taint_refs[i] > 0 or i == 0]

    def name_rank(self) -> np.ndarray:
        """Each row's position in name order (the order of a label-index lookup); cached per node set."""
        if self._name_rank is None:
            rank = np.zeros(self._size, np.int64)
            ordered = sorted(self.rows)
            rank[np.fromiter((self.rows[name] for name in ordered), np.intp, len(ordered))] = np.arange(
                len(ordered)
            )
            self._name_rank = rank
        return self._name_rank

    # -- sums -------------------------------------------------------------------------------
    def sync(self, sources: SumSources) -> None:
        """Copy the sums of every dirty node from *sources* (the only place sums are written)."""
        self.sources = sources
        if not (self._dirty or self._held_dirty):
            return
        columns = len(self.columns)
        every = self._dirty_rows(self._dirty)
        held = self._dirty_rows(self._held_dirty - self._dirty)
        self._dirty.clear()
        self._held_dirty.clear()
        if every.rows:
            for field in _COUNT_FIELDS:
                self._copy(field, every, getattr(sources, field))
            for field in _SUM_FIELDS:
                copy_sums(self.columns, self._size, field, every, getattr(sources, field))
        if held.rows:
            copy_sums(self.columns, self._size, "held", held, sources.held)
        changed = every.rows + held.rows
        self._changed(changed if len(self.columns) == columns else None)
        if len(changed) <= FEW_ROWS:
            for row in changed:
                self._refresh_capacities(row)
            return
        index = np.array(changed, np.intp)
        for key, capacity in list(self._capacities.items()):
            column = self.columns[capacity.resource]
            if column.wide:
                self._capacities.discard(key)
            else:
                capacity.update_free(column, index)

    def _dirty_rows(self, names: Iterable[str]) -> DirtyRows:
        rows = self.rows
        found = [(name, row) for name in names if (row := rows.get(name)) is not None]
        return DirtyRows([name for name, _ in found], [row for _, row in found])

    def _copy(self, field: str, dirty: DirtyRows, counts: Mapping[str, int]) -> None:
        write_rows(getattr(self, field), dirty, [counts.get(name, 0) for name in dirty.names])

    def node_rows(self, names: Sequence[str]) -> np.ndarray:
        """The row of each name, -1 for a name not in the table (the lookups run in C)."""
        if len(names) > 1:
            try:  # every name known, the usual case: one itemgetter call, a fifth faster than get
                return np.fromiter(itemgetter(*names)(self.rows), np.intp, len(names))
            except KeyError:
                pass
        return np.fromiter(map(self.rows.get, names, repeat(-1, len(names))), np.intp, len(names))

    def candidates(self, names: list[str], key: bytes | memoryview | None = None) -> Candidates:
        """*names* resolved to rows; a list kept by a recent call (same *key*, which is
        candidates.names_key(names) when given) is answered from it while no node came or went."""
        key = names_key(names) if key is None else key
        kept = self._candidates.get(key)
        if kept is not None and len(kept.rows) == len(names):
            return kept
        found = Candidates(self.node_rows(names), self.json_names)
        self.keep_candidates(key, found)
        return found

    def keep_candidates(self, key: bytes | memoryview, candidates: Candidates) -> None:
        """Keep *candidates* (resolved on this table) for the list whose key is *key*: the filter's
        passed names, which kube-scheduler sends to prioritize next."""
        self._candidates.put(key, candidates, value_bytes=candidates.nbytes)
