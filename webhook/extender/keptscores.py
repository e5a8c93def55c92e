"""The last candidates' scores, brought up to date by rescoring only the rows that changed.

kube-scheduler prioritizes pod after pod over the same candidates, and pods of one workload look
alike to the scorers. Between two such calls only a few nodes change: the one the previous pod was
bound to (the ledger holds its limits), those whose pods came or went. Each scorer's value for a
node depends on that node's row alone until the normalisation over the candidates
(columnar.scorer_parts), so the scores of the last call are kept before normalisation, the rows the
node table changed since (NodeTable.changed_since) are rescored, and the normalisation and weighting
run again over the whole list: at 5,000 candidates about a sixth of scoring them all. When no
candidate's row changed, the last answer stands as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from limitguard.core.scoring import PodFacts, ScorerConfig
from limitguard.extender.columnar import ColumnScores, combine, scorer_parts
from limitguard.state.candidates import Candidates
from limitguard.state.table import NodeTable

# Rescored row by row while fewer candidates than this share changed; more are scored afresh.
_MOST_RESCORED_SHARE = 0.25


@dataclass(slots=True)
class _Kept:
    table: NodeTable
    candidates: Candidates
    pod: PodFacts
    version: int  # the table's version the scores are current at
    parts: list[np.ndarray]  # scorer_parts over every known candidate (read-only)
    scored: ColumnScores


def _positions(candidates: Candidates, rows: list[int], table_size: int) -> np.ndarray:
    """Where among the known candidates each of the table's *rows* stands (twice for a name listed twice)."""
    index = candidates.index
    if isinstance(index, slice):  # consecutive rows: positions by subtraction
        start, stop = index.start, index.stop
        return np.array(sorted({row - start for row in rows if start <= row < stop}), np.intp)
    changed = set(rows)
    if len(changed) <= 4:  # one comparison of the index per row (a binding changes one or two)
        found = None
        for row in changed:
            found = index == row if found is None else found | (index == row)
        return np.flatnonzero(found) if found is not None else np.empty(0, np.intp)
    marked = np.zeros(table_size, bool)
    marked[list(changed)] = True
    return np.flatnonzero(marked[index])


def _read_only(*arrays: np.ndarray) -> None:
    for array in arrays:
        array.flags.writeable = False


class KeptScores:
    """The scores of the last candidates scored, for one extender (its scorers and ratios are fixed)."""

    __slots__ = ("_cluster_ratios", "_kept", "_scorers")

    def __init__(self, scorers: Sequence[ScorerConfig], cluster_ratios: Mapping[str, int]) -> None:
        self._scorers = scorers
        self._cluster_ratios = cluster_ratios
        self._kept: _Kept | None = None

    def score(
        self, table: NodeTable, candidates: Candidates, names: Sequence[str], pod: PodFacts
    ) -> ColumnScores | None:
        """columnar.score_rows(table, candidates.index, names, pod, ...): *names* are the known
        candidates, in order. None for the reference path."""
        kept = self._kept
        if kept is not None and kept.table is table and kept.candidates is candidates and kept.pod == pod:
            changed = table.changed_since(kept.version)
            if changed is not None:
                positions = _positions(candidates, changed, table.size)
                if not len(positions):
                    kept.version = table.version
                    return kept.scored
                if len(positions) < _MOST_RESCORED_SHARE * candidates.count:
                    return self._rescored(kept, positions, names)
        return self._scored_afresh(table, candidates, names, pod)

    def _rescored(self, kept: _Kept, positions: np.ndarray, names: Sequence[str]) -> ColumnScores | None:
        index = kept.candidates.index
        rows = (
            (np.arange(index.start, index.stop)[positions]) if isinstance(index, slice) else index[positions]
        )
        fresh = scorer_parts(kept.table, rows, len(rows), kept.pod, self._scorers, self._cluster_ratios)
        if fresh is None:
            return self._scored_afresh(kept.table, kept.candidates, names, kept.pod)
        parts = []
        for part, rescored in zip(kept.parts, fresh, strict=True):
            part = part.copy()  # a kept answer may still be read (its score sheet)
            part[positions] = rescored
            parts.append(part)
        scored = combine(names, self._scorers, parts)
        if scored is None:
            self._kept = None
            return None
        _read_only(*parts, scored.totals, scored.priorities)
        kept.parts, kept.scored, kept.version = parts, scored, kept.table.version
        return scored

    def _scored_afresh(
        self, table: NodeTable, candidates: Candidates, names: Sequence[str], pod: PodFacts
    ) -> ColumnScores | None:
        self._kept = None
        parts = scorer_parts(table, candidates.index, len(names), pod, self._scorers, self._cluster_ratios)
        scored = None if parts is None else combine(names, self._scorers, parts)
        if parts is None or scored is None:
            return None
        _read_only(*parts, scored.totals, scored.priorities)
        self._kept = _Kept(table, candidates, pod, table.version, parts, scored)
        return scored
