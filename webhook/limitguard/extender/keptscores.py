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

from limitguard.core.memo import Cleared, KiB, MiB, RecentMemo
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

    @property
    def nbytes(self) -> int:
        return sum(part.nbytes for part in self.parts)


def _read_only(arrays: Sequence[np.ndarray]) -> None:
    for array in arrays:
        array.flags.writeable = False


def _measured(pod: PodFacts) -> tuple[object, ...]:
    """What stands for the shape's size in a memo (its maps as tuples: the walk does not read dicts)."""
    return (tuple(pod.limits.items()), tuple(pod.requests.items()), pod.types)


class KeptScores:
    """The kept values of one extender (its scorers and cluster ratios are fixed)."""

    __slots__ = ("_cluster_ratios", "_scorers", "_seen", "_shapes")

    def __init__(self, scorers: Sequence[ScorerConfig], cluster_ratios: Mapping[str, int]) -> None:
        self._scorers = scorers
        self._cluster_ratios = cluster_ratios
        # Policy: per pod shape (PodFacts, by equality), _SHAPES_KEPT shapes, 32 MiB of kept values
        # (8 bytes a row per scorer: 480 KB at 15,000 nodes and four scorers), the least recently used dropped
        # first; each brought up to date by the table's change log, or scored afresh.
        self._shapes: RecentMemo[PodFacts, _Shape] = RecentMemo(
            "kept-scores", entries=_SHAPES_KEPT, max_bytes=32 * MiB, cleared=Cleared.ON_CHANGE
        )
        # Policy: the last _SHAPES_SEEN shapes scored once, 256 KiB, the least recently used dropped first.
        self._seen: RecentMemo[PodFacts, bool] = RecentMemo(
            "scored-once", entries=_SHAPES_SEEN, max_bytes=256 * KiB
        )

    def score(
        self, table: NodeTable, candidates: Candidates, names: Sequence[str], pod: PodFacts
    ) -> ColumnScores:
        """columnar.score_rows(table, candidates.index, names, pod, ...): *names* are the known
        candidates, in order."""
        shape = self._current(table, pod)
        if shape is None:  # its candidates scored alone
            return score_rows(table, candidates.index, names, pod, self._scorers, self._cluster_ratios)
        if shape.last is not None and shape.last[0] is candidates:
            return shape.last[1]
        index = candidates.index
        scored = combine(names, self._scorers, [part[index] for part in shape.parts])
        if scored is None:  # int64 cannot be exact over these candidates: scored in Python integers
            return score_rows(table, index, names, pod, self._scorers, self._cluster_ratios)
        _read_only((scored.totals, scored.priorities))
        shape.last = (candidates, scored)
        return scored

    def _current(self, table: NodeTable, pod: PodFacts) -> _Shape | None:
        """The kept values of *pod*'s shape, up to date; None while the shape was scored only once
        (or the table cannot be exact for every row): its candidates are then scored alone."""
        shape = self._shapes.get(pod)
        if shape is not None and shape.table is not table:
            shape = None  # kept for another table (the state's was replaced): not this one's
        if shape is not None:
            if self._brought_up_to_date(shape):  # the same rows: its size is what was measured
                return shape
            self._shapes.discard(pod)
        elif self._seen.get(pod) is None:
            self._seen.put(pod, True, measured=_measured(pod))
            return None
        rows = table.high_water
        parts = scorer_parts(table, slice(0, rows), rows, pod, self._scorers, self._cluster_ratios)
        if parts is None:
            return None
        _read_only(parts)
        shape = _Shape(table, pod, table.version, parts)
        self._shapes.put(pod, shape, measured=_measured(pod), value_bytes=shape.nbytes)
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
