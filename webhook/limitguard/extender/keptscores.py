"""Each scorer's value for every node, kept per pod shape and brought up to date row by row.

kube-scheduler prioritizes pod after pod, and the pods of one workload look alike to the scorers.
Its candidate lists differ from call to call (it starts each search where the last one stopped,
filters in parallel, and sends the nodes in the order they passed), but the nodes change little
between two calls: the one the previous pod was bound to, those whose pods came or went. Each
scorer's value for a node depends on that node's row alone until the normalisation over the
candidates (columnar.scorer_parts), so for a pod shape scored a second time those values are
computed for every row of the node table and kept, with the table version they are current at.
A call then rescores the rows the table changed since (NodeTable.changed_since), takes its
candidates' values from the kept rows, and runs only the normalisation and weighting over them.
The same candidates with nothing changed get the last answer as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from limitguard.core.scoring import PodFacts, ScorerConfig
from limitguard.extender.columnar import ColumnScores, combine, score_rows, scorer_parts
from limitguard.state.candidates import Candidates
from limitguard.state.table import NodeTable

_SHAPES_KEPT = 4  # pod shapes whose values are kept (a few workloads scheduled side by side)
_SHAPES_SEEN = 8  # pod shapes scored once, remembered so that a second time keeps their values
# Rescored row by row while fewer rows than this share of the table changed; more: scored afresh.
_MOST_RESCORED_SHARE = 0.25


@dataclass(slots=True)
class _Shape:
    table: NodeTable
    pod: PodFacts
    version: int  # the table's version the values are current at
    parts: list[np.ndarray]  # scorer_parts over rows 0..high_water (read-only, replaced on change)
    last: tuple[Candidates, ColumnScores] | None = None  # the last answer, at this version


def _read_only(arrays: Sequence[np.ndarray]) -> None:
    for array in arrays:
        array.flags.writeable = False


class KeptScores:
    """The kept values of one extender (its scorers and cluster ratios are fixed)."""

    __slots__ = ("_cluster_ratios", "_scorers", "_seen", "_shapes")

    def __init__(self, scorers: Sequence[ScorerConfig], cluster_ratios: Mapping[str, int]) -> None:
        self._scorers = scorers
        self._cluster_ratios = cluster_ratios
        self._shapes: list[_Shape] = []  # newest last
        self._seen: list[PodFacts] = []

    def score(
        self, table: NodeTable, candidates: Candidates, names: Sequence[str], pod: PodFacts
    ) -> ColumnScores | None:
        """columnar.score_rows(table, candidates.index, names, pod, ...): *names* are the known
        candidates, in order. None for the reference path."""
        shape = self._current(table, pod)
        if shape is None:  # its candidates scored alone
            return score_rows(table, candidates.index, names, pod, self._scorers, self._cluster_ratios)
        if shape.last is not None and shape.last[0] is candidates:
            return shape.last[1]
        index = candidates.index
        scored = combine(names, self._scorers, [part[index] for part in shape.parts])
        if scored is not None:
            _read_only((scored.totals, scored.priorities))
            shape.last = (candidates, scored)
        return scored

    def _current(self, table: NodeTable, pod: PodFacts) -> _Shape | None:
        """The kept values of *pod*'s shape, up to date; None while the shape was scored only once
        (or the table cannot be exact for every row): its candidates are then scored alone."""
        for position, shape in enumerate(self._shapes):
            if shape.table is table and shape.pod == pod:
                del self._shapes[position]
                if self._brought_up_to_date(shape):
                    self._shapes.append(shape)
                    return shape
                break
        else:
            if pod not in self._seen:
                self._seen = [*self._seen[-(_SHAPES_SEEN - 1) :], pod]
                return None
        rows = table.high_water
        parts = scorer_parts(table, slice(0, rows), rows, pod, self._scorers, self._cluster_ratios)
        if parts is None:
            return None
        _read_only(parts)
        shape = _Shape(table, pod, table.version, parts)
        self._shapes = [*self._shapes[-(_SHAPES_KEPT - 1) :], shape]
        return shape

    def _brought_up_to_date(self, shape: _Shape) -> bool:
        """Rescore the rows changed since *shape*'s version; False when it must be scored afresh."""
        table = shape.table
        changed = table.changed_since(shape.version)
        if changed is None:
            return False
        if not changed:
            return True
        rows = np.array(sorted(set(changed)), np.intp)
        kept_rows = len(shape.parts[0])
        if int(rows[-1]) >= kept_rows or len(rows) >= _MOST_RESCORED_SHARE * kept_rows:
            return False  # a new row, or too many changed
        fresh = scorer_parts(table, rows, len(rows), shape.pod, self._scorers, self._cluster_ratios)
        if fresh is None:
            return False
        parts = []
        for part, rescored in zip(shape.parts, fresh, strict=True):
            part = part.copy()  # the last answers' score sheets still read the kept values
            part[rows] = rescored
            parts.append(part)
        _read_only(parts)
        shape.parts, shape.version, shape.last = parts, table.version, None
        return True
