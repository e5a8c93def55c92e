"""Weighting the scorers into one node score, and the plain data they read.

Each scorer gives every candidate node 0..100 (LimitAware and PodState after min-max normalisation
over the candidates); the node's score is the weighted mean of the scorers with a weight > 0,
truncated, then put on the extender's 0..10 scale. Scorers with weight 0 are still computed, so
`explain` can show what they would say without them counting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.podlimits import PodRules, pod_amounts
from limitguard.core.scoring import fitplus, limitaware, podstate, scarce
from limitguard.core.scoring.normalize import min_max_normalise, to_extender_priority

ScorerArgs = limitaware.LimitAwareArgs | fitplus.FitPlusArgs | scarce.ScarceResourceArgs | None

SCORER_NAMES = (limitaware.NAME, fitplus.NAME, scarce.NAME, podstate.NAME)


@dataclass(frozen=True)
class ScorerConfig:
    name: str  # one of SCORER_NAMES
    weight: int
    args: ScorerArgs = None

    def resolved_args(self) -> ScorerArgs:
        return self.args if self.args is not None else default_args(self.name)


# Built once: every prioritize call resolves each scorer's args (the args are frozen).
_DEFAULT_ARGS: dict[str, ScorerArgs] = {
    limitaware.NAME: limitaware.LimitAwareArgs(),
    fitplus.NAME: fitplus.FitPlusArgs(),
    scarce.NAME: scarce.ScarceResourceArgs(),
    podstate.NAME: None,
}


def default_args(name: str) -> ScorerArgs:
    """The args a scorer uses when none are configured."""
    return _DEFAULT_ARGS[name]


# What the extender does until configured otherwise: spread limits, nothing else. FitPlus with the
# default cpu/memory LeastAllocated would double the in-tree NodeResourcesFit score, and
# ScarceResourceAvoidance needs to be told which resources are scarce.
DEFAULT_SCORERS: tuple[ScorerConfig, ...] = (ScorerConfig(limitaware.NAME, 1),)


def with_all_scorers(configured: Sequence[ScorerConfig]) -> tuple[ScorerConfig, ...]:
    """The configured scorers plus every other one at weight 0 (shown by explain, never counted)."""
    present = {scorer.name for scorer in configured}
    return tuple(configured) + tuple(ScorerConfig(name, 0) for name in SCORER_NAMES if name not in present)


@dataclass(frozen=True, slots=True)
class PodFacts:
    """What the scorers read of the pod being scheduled."""

    limits: Mapping[str, int]  # limits with non-zero cpu/memory defaults
    requests: Mapping[str, int]  # requests with non-zero cpu/memory defaults
    types: frozenset[str]  # resources the pod really requests (> 0, no defaults)

    @classmethod
    def from_spec(
        cls, spec: Mapping[str, Any], status: Mapping[str, Any] | None, rules: PodRules
    ) -> PodFacts:
        """Raises PodSpecError for a spec whose resources cannot be read."""
        amounts = pod_amounts(spec, status, rules)
        return cls(
            limits=amounts.scoring_limits,
            requests=amounts.scoring_requests,
            types=scarce.resource_types(amounts.requests),
        )


@dataclass(slots=True)  # not frozen: built 5,000 times per call, frozen __init__ is slower
class NodeFacts:
    """What the scorers read of one candidate node."""

    name: str
    allocatable: Mapping[str, int]
    ratio_override: Mapping[str, int] | None  # from a valid node annotation
    limits_allocated: Mapping[str, int]  # summed limits with non-zero defaults (+ ledger)
    requested: Mapping[str, int]  # summed requests with non-zero defaults
    terminating: int = 0
    nominated: int = 0
    types: frozenset[str] = field(default=frozenset())  # scarce.resource_types(allocatable)


@dataclass(frozen=True)
class ScorerColumn:
    name: str
    weight: int
    raw: list[int]  # before normalisation (LimitAware may be negative)
    scores: list[int]  # 0..100


@dataclass(frozen=True)
class ScoreSheet:
    nodes: list[str]
    columns: list[ScorerColumn]
    totals: list[int]  # weighted mean of the counted scorers, 0..100
    priorities: list[int]  # totals on the extender scale, 0..10


def _raw_scores(
    scorer: ScorerConfig, pod: PodFacts, nodes: Sequence[NodeFacts], cluster_ratios: Mapping[str, int]
) -> tuple[list[int], list[int]]:
    args = scorer.resolved_args()
    if scorer.name == limitaware.NAME:
        assert isinstance(args, limitaware.LimitAwareArgs)
        default = args.default_ratios if args.default_ratios is not None else cluster_ratios
        limit_raw = limitaware.limit_aware_scorer(pod.limits, args.weights)
        raw = [
            limit_raw(
                node.allocatable,
                node.limits_allocated,
                node.ratio_override if node.ratio_override is not None else default,
            )
            for node in nodes
        ]
        return raw, min_max_normalise(raw)
    if scorer.name == fitplus.NAME:
        assert isinstance(args, fitplus.FitPlusArgs)
        fit_score = fitplus.fit_plus_scorer(pod.types, pod.requests, args.resources)
        raw = [fit_score(node.requested, node.allocatable) for node in nodes]
        return raw, raw
    if scorer.name == scarce.NAME:
        assert isinstance(args, scarce.ScarceResourceArgs)
        raw = [scarce.scarce_resource_score(node.types, pod.types, args.resources) for node in nodes]
        return raw, raw
    if scorer.name == podstate.NAME:
        raw = [podstate.pod_state_raw(node.terminating, node.nominated) for node in nodes]
        return raw, min_max_normalise(raw)
    raise ValueError(f"unknown scorer {scorer.name!r}")


def score_candidates(
    pod: PodFacts,
    nodes: Sequence[NodeFacts],
    scorers: Sequence[ScorerConfig],
    cluster_ratios: Mapping[str, int],
) -> ScoreSheet:
    """Score every candidate node with every scorer, then weight them (pure, no I/O)."""
    columns = []
    for scorer in scorers:
        raw, scores = _raw_scores(scorer, pod, nodes, cluster_ratios)
        columns.append(ScorerColumn(scorer.name, scorer.weight, raw, scores))
    # The weighted mean, column by column (the scores are 0..100, so // truncates like Go).
    weighted = [0] * len(nodes)
    weight_sum = 0
    for column in columns:
        if column.weight > 0:
            weight_sum += column.weight
            weight = column.weight
            weighted = [total + score * weight for total, score in zip(weighted, column.scores, strict=True)]
    totals = [total // weight_sum for total in weighted] if weight_sum else weighted
    return ScoreSheet(
        nodes=[node.name for node in nodes],
        columns=columns,
        totals=totals,
        priorities=[to_extender_priority(total) for total in totals],
    )
