"""The extender's filter and prioritize over the node table: whole columns at once, integers only.

Each function returns exactly what the reference oracle (limitguard.testing.reference: a per-node
loop over NodeFacts and limitguard.core.scoring.score_candidates) returns. Where int64 cannot be
exact (a `wide` column, weights, limits or ratios whose products pass int64) the same vector code
runs again over the table's columns in Python integers (state.exact.ExactTable): callers never
choose. Go's truncating division is reproduced with sign-aware floor division.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from limitguard.core.scoring import (
    PodFacts,
    ScorerColumn,
    ScorerConfig,
    ScoreSheet,
    fitplus,
    limitaware,
    podstate,
    scarce,
)
from limitguard.core.scoring.normalize import MAX_EXTENDER_PRIORITY, MAX_NODE_SCORE, MIN_NODE_SCORE
from limitguard.state.candidates import Candidates, names_key
from limitguard.state.columns import exact
from limitguard.state.exact import ExactTable
from limitguard.state.scan import capacity, fit_failures
from limitguard.state.table import NodeTable

SAFE = 2**62  # a product whose magnitude stays below this cannot overflow int64
# A failed row's reason key: a bit per used resource, the ratio source's id (< 2**15) above them.
_MAX_CODED_RESOURCES = 48


def _trunc_div(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise Go `/` (truncation toward zero); *denominator* must be non-zero."""
    quotient = np.abs(numerator) // np.abs(denominator)
    return np.where((numerator >= 0) == (denominator > 0), quotient, -quotient)


def _largest(values: np.ndarray) -> int:
    return int(np.abs(values).max()) if len(values) else 0


def filter_rows(
    table: NodeTable,
    names: Sequence[str],
    candidates: Candidates,
    limits: Mapping[str, int],
    default_ratios: Mapping[str, int],
    reason_of: Callable[[list[str], str], str],
    held_elsewhere: Mapping[str, Mapping[str, int]] | None = None,
) -> tuple[list[str], dict[str, str], int, bytes | None]:
    """(passed names, failed name -> reason_of(the resources that do not fit, where the node's ratio
    came from), unknown count, the passed names' key when some failed).

    *candidates* are *names* resolved on *table*; *held_elsewhere*: per node, what it keeps for
    nominated pods beyond its sums (scan.fit_failures)."""
    unknown = candidates.unknown
    if not candidates.count:
        return list(names), {}, unknown, None
    used = [(resource, amount) for resource, amount in limits.items() if amount > 0]
    failures = fit_failures(table, used, default_ratios, held_elsewhere)
    if not failures:
        return list(names), {}, unknown, None
    # a bit per failing resource, in the order of the pod's limits (the order shortfalls() names them);
    # past what int64 codes with the ratio source's id above them, Python integers
    kind = np.int64 if len(used) <= _MAX_CODED_RESOURCES else object
    code = np.zeros(len(names), kind)
    if unknown:
        known = candidates.known
        rows = np.where(known, candidates.rows, 0)
        for bit, failed in enumerate(failures):
            code |= (failed[rows] & known).astype(kind) << bit
    else:
        rows = candidates.index
        for bit, failed in enumerate(failures):
            code |= failed[rows].astype(kind) << bit
    if not code.any():
        return list(names), {}, unknown, None
    # Split the names and build the failures in C: one reason per distinct set of failing resources
    # and ratio source (the source id goes above the resource bits).
    named = np.array(names, object)
    failing = code != 0
    keyed = code[failing] | table.ratio_source[rows][failing].astype(kind) << len(used)
    distinct, inverse = np.unique(keyed, return_inverse=True)
    reasons = np.empty(len(distinct), object)
    reasons[:] = [
        reason_of(
            [used[bit][0] for bit in range(len(used)) if value >> bit & 1],
            table.ratio_sources[value >> len(used)].describe(),
        )
        for value in distinct.tolist()
    ]
    failed_names = dict(zip(named[failing].tolist(), reasons[inverse].tolist(), strict=True))
    passed = named[~failing].tolist()
    # kube-scheduler prioritizes exactly the names that passed next: keep their rows for it
    passed_key = names_key(passed)
    table.keep_candidates(passed_key, candidates.subset(~failing))
    return passed, failed_names, unknown, passed_key


def _min_max(raw: np.ndarray, exact_ints: bool) -> np.ndarray | None:
    if not len(raw):
        return raw
    lowest, highest = int(raw.min()), int(raw.max())
    spread = highest - lowest
    if spread == 0:
        return np.full(len(raw), MIN_NODE_SCORE, np.int64)
    if not exact_ints and spread * (MAX_NODE_SCORE - MIN_NODE_SCORE) >= SAFE:
        return None
    return (raw - lowest) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // spread + MIN_NODE_SCORE


def _trunc_div_positive(numerator: np.ndarray, denominator: np.ndarray | int) -> np.ndarray:
    """Go `/` for a positive *denominator*: floor division, one up where a negative one was inexact."""
    quotient = numerator // denominator
    if not numerator.size or int(numerator.min()) >= 0:  # the usual case: floor and truncation agree
        return quotient
    return quotient + ((numerator < 0) & (quotient * denominator != numerator))


Rows = np.ndarray | slice  # node-table rows: an index array, or a slice (a view: no copy)


def _limit_aware(
    table: NodeTable | ExactTable,
    rows: Rows,
    size: int,
    pod: PodFacts,
    args: limitaware.LimitAwareArgs,
    cluster_ratios: Mapping[str, int],
    exact_ints: bool,
) -> np.ndarray | None:
    default = args.default_ratios if args.default_ratios is not None else cluster_ratios
    total = np.zeros(size, object if exact_ints else np.int64)
    some_weights = None  # per row: the weights of resources only some candidates count
    every_weight = 0  # the weights of resources every candidate counts (the usual case)
    for resource, weight in args.weights.items():
        pod_limit = pod.limits.get(resource, 0)
        found = capacity(table, resource, default)  # type: ignore[arg-type]
        if found is None or not (exact_ints or exact(pod_limit)):
            return None
        cap = found.cap[rows]
        counted = found.present[rows] & (cap > 0)
        column = table.columns.get(resource)
        allocated = 0 if column is None else column.scoring[rows] + column.held[rows]
        free = (cap - allocated - pod_limit) * MAX_NODE_SCORE
        if counted.all():
            score = _trunc_div_positive(free, cap)
            weighted = score * weight
            every_weight += weight
        else:
            score = _trunc_div_positive(free, np.where(counted, cap, 1))
            weighted = np.where(counted, score * weight, 0)
            counted_weight = np.where(counted, weight, 0)
            some_weights = counted_weight if some_weights is None else some_weights + counted_weight
        if not exact_ints and _largest(score) * abs(weight) * len(args.weights) >= SAFE:
            return None
        total += weighted
    if some_weights is None:  # one weight sum for every row
        if not every_weight:
            return np.zeros(size, total.dtype)
        return (
            _trunc_div_positive(total, every_weight) if every_weight > 0 else _trunc_div(total, every_weight)
        )
    weight_sum = some_weights + every_weight
    has_weight = weight_sum != 0
    return np.where(has_weight, _trunc_div(total, np.where(has_weight, weight_sum, 1)), 0)


def _fit_plus(
    table: NodeTable | ExactTable,
    rows: Rows,
    size: int,
    pod: PodFacts,
    args: fitplus.FitPlusArgs,
    exact_ints: bool,
) -> np.ndarray | None:
    terms = [
        (
            resource,
            pod.requests.get(resource, 0),
            strategy.type is fitplus.Strategy.MOST_ALLOCATED,
            strategy.weight,
        )
        for resource in sorted(pod.types)
        if (strategy := args.resources.get(resource)) is not None and scarce.is_resource_type(resource)
    ]
    weight_sum = sum(weight for *_, weight in terms)
    if not weight_sum:
        return np.full(size, MAX_NODE_SCORE, np.int64)
    if not exact_ints and sum(abs(weight) for *_, weight in terms) * MAX_NODE_SCORE >= SAFE:
        return None
    total = np.zeros(size, object if exact_ints else np.int64)
    for resource, pod_request, most, weight in terms:
        column = table.columns.get(resource)
        if column is None:
            continue  # no node has any: allocatable 0 scores 0
        if not exact_ints and (column.wide or not exact(pod_request)):
            return None
        allocatable = column.allocatable[rows]
        requested = column.requested[rows] + pod_request
        has = allocatable > 0
        if has.all():  # the usual case: no masking needed
            if most:
                score = np.minimum(requested, allocatable) * MAX_NODE_SCORE // allocatable
            else:
                left = allocatable - requested
                score = np.where(left >= 0, left * MAX_NODE_SCORE // allocatable, 0)
            total += score * weight
            continue
        divisor = np.where(has, allocatable, 1)
        if most:
            score = np.where(has, np.minimum(requested, allocatable) * MAX_NODE_SCORE // divisor, 0)
        else:
            fits = has & (requested <= allocatable)
            score = np.where(fits, (allocatable - requested) * MAX_NODE_SCORE // divisor, 0)
        total += score * weight
    return total // weight_sum


def _scarce(
    table: NodeTable | ExactTable,
    rows: Rows,
    size: int,
    pod: PodFacts,
    args: scarce.ScarceResourceArgs,
    exact_ints: bool,
) -> np.ndarray | None:
    if not any(
        resource in table.columns and scarce.is_resource_type(resource) and resource not in pod.types
        for resource in args.resources
    ):
        return np.full(size, MAX_NODE_SCORE, np.int64)  # no node has any scarce resource: all score 100
    leftover = np.zeros(size, np.int64)
    scarce_left = np.zeros(size, np.int64)
    for resource, column in table.columns.items():
        if not scarce.is_resource_type(resource) or resource in pod.types:
            continue
        if column.wide and not exact_ints:
            return None
        has = (column.allocatable[rows] > 0).astype(np.int64)
        leftover += has
        if resource in args.resources:
            scarce_left += has
    counted = (leftover > 0) & (scarce_left > 0)
    return np.where(
        counted, (leftover - scarce_left) * MAX_NODE_SCORE // np.where(counted, leftover, 1), MAX_NODE_SCORE
    )


@dataclass(frozen=True)
class ColumnScores:
    """score_candidates' answer as arrays; the ScoreSheet of lists is built only on demand."""

    names: Sequence[str]
    columns: list[tuple[ScorerConfig, np.ndarray, np.ndarray]]  # scorer, raw, 0..100
    totals: np.ndarray
    priorities: np.ndarray  # 0..10

    def to_sheet(self) -> ScoreSheet:
        return ScoreSheet(
            list(self.names),
            [
                ScorerColumn(s.name, s.weight, raw.tolist(), scores.tolist())
                for s, raw, scores in self.columns
            ],
            self.totals.tolist(),
            self.priorities.tolist(),
        )


def scorer_parts(
    table: NodeTable | ExactTable,
    rows: Rows,
    size: int,
    pod: PodFacts,
    scorers: Sequence[ScorerConfig],
    cluster_ratios: Mapping[str, int],
) -> list[np.ndarray] | None:
    """Each scorer's value for each of *rows* before the normalisation over the candidates (raw
    LimitAware and PodState, final FitPlus and ScarceResourceAvoidance); None when int64 cannot be
    exact for them (then ExactTable(table) can). A row's values depend on that row alone: kept
    scores are brought up to date row by row."""
    exact_ints = isinstance(table, ExactTable)
    if not exact_ints and sum(abs(scorer.weight) for scorer in scorers) * MAX_NODE_SCORE >= SAFE:
        return None
    parts = []
    for scorer in scorers:
        args = scorer.resolved_args()
        if scorer.name == limitaware.NAME:
            assert isinstance(args, limitaware.LimitAwareArgs)
            part = _limit_aware(table, rows, size, pod, args, cluster_ratios, exact_ints)
        elif scorer.name == fitplus.NAME:
            assert isinstance(args, fitplus.FitPlusArgs)
            part = _fit_plus(table, rows, size, pod, args, exact_ints)
        elif scorer.name == scarce.NAME:
            assert isinstance(args, scarce.ScarceResourceArgs)
            part = _scarce(table, rows, size, pod, args, exact_ints)
        elif scorer.name == podstate.NAME:
            part = table.terminating[rows] - table.nominated[rows]
        else:
            raise ValueError(f"unknown scorer {scorer.name!r}")
        if part is None:
            return None
        parts.append(part)
    return parts


_NORMALISED = frozenset({limitaware.NAME, podstate.NAME})  # min-max over the candidates
# A clipped score (0..100, never negative) on the extender's scale: x * 10 // 100 is x // 10.
_SCORE_PER_PRIORITY = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
assert _SCORE_PER_PRIORITY * MAX_EXTENDER_PRIORITY == MAX_NODE_SCORE and MIN_NODE_SCORE >= 0


def combine(
    names: Sequence[str], scorers: Sequence[ScorerConfig], parts: list[np.ndarray]
) -> ColumnScores | None:
    """score_candidates' answer from scorer_parts over every candidate; None when int64 cannot be
    exact for it (parts in Python integers always can)."""
    columns = []
    weighted: np.ndarray | None = None
    weight_sum = 0
    exact_ints = any(part.dtype == object for part in parts)
    for scorer, raw in zip(scorers, parts, strict=True):
        scores = _min_max(raw, exact_ints) if scorer.name in _NORMALISED else raw
        if scores is None:
            return None
        columns.append((scorer, raw, scores))
        if scorer.weight > 0:
            weight_sum += scorer.weight
            term = scores if scorer.weight == 1 else scores * scorer.weight
            weighted = term if weighted is None else weighted + term  # never written in place
    # weighted is set exactly when some weight is positive, and the division makes a new array
    totals = np.zeros(len(names), np.int64) if weighted is None else weighted // weight_sum
    clipped = np.minimum(np.maximum(totals, MIN_NODE_SCORE), MAX_NODE_SCORE)  # ufuncs: no np.clip wrapper
    priorities = clipped // _SCORE_PER_PRIORITY  # = clipped * MAX_EXTENDER_PRIORITY // MAX_NODE_SCORE
    if exact_ints:
        priorities = priorities.astype(np.int64)  # 0..10 whatever the totals were
    return ColumnScores(names, columns, totals, priorities)


def score_rows(
    table: NodeTable,
    rows: Rows,
    names: Sequence[str],
    pod: PodFacts,
    scorers: Sequence[ScorerConfig],
    cluster_ratios: Mapping[str, int],
) -> ColumnScores:
    """score_candidates for the nodes of *rows* (all known, one per name): in int64, else (a value
    or a product past it) in Python integers."""
    parts = scorer_parts(table, rows, len(names), pod, scorers, cluster_ratios)
    scored = None if parts is None else combine(names, scorers, parts)
    if scored is None:
        index = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
        exact_rows = ExactTable(table, index)  # the candidates' rows alone, renumbered
        parts = scorer_parts(exact_rows, slice(0, len(index)), len(index), pod, scorers, cluster_ratios)
        assert parts is not None  # Python integers: nothing to refuse
        scored = combine(names, scorers, [part.astype(object) for part in parts])
        assert scored is not None
    return scored
