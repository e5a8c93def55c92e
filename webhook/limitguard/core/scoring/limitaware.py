"""LimitAware score (Koordinator "Limit Aware Scheduling" proposal, 2023-07-12).

Least-allocated over the node's *limit capacity* instead of its allocatable, per weighted resource:

    score(R) = (capacity(R) - (allocated limits(R) + pod limit(R))) x 100 / capacity(R)
    raw      = sum(score(R) x weight(R)) / sum(weight(R))      (truncated toward zero)

capacity(R) = allocatable(R) x ratio(R) / 100. The raw score goes negative on a node already past
its ratio; the scorer's normalisation then maps the candidates' raw scores onto 0..100 (min-max).
Only resources of the node's effective ratio map with a non-zero capacity count; limits use the
scheduler's non-zero cpu/memory defaults (scoring only, SPEC 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from limitguard.core.scoring.normalize import MAX_NODE_SCORE, trunc_div

NAME = "LimitAware"


@dataclass(frozen=True)
class LimitAwareArgs:
    """`LimitAwareArgs`: scoringResourceWeights and an optional defaultLimitToAllocatableRatio.

    *default_ratios* None means limitguard's own cluster default applies; a node's valid annotation
    always wins, as in filtering.
    """

    weights: Mapping[str, int] = field(default_factory=lambda: {"cpu": 1, "memory": 1})
    default_ratios: Mapping[str, int] | None = None


NodeLimitScorer = Callable[[Mapping[str, int], Mapping[str, int], Mapping[str, int]], int]


def limit_aware_scorer(pod_limits: Mapping[str, int], weights: Mapping[str, int]) -> NodeLimitScorer:
    """The raw-score function for one pod, `(allocatable, allocated, ratios) -> raw`.

    The pod's side is prepared once per request; the per-node loop is the extender's hot path
    (5,000 candidates per call), so Go's truncating division is inlined for positive divisors.
    """
    terms = tuple((resource, weight, pod_limits.get(resource, 0)) for resource, weight in weights.items())

    def raw(allocatable: Mapping[str, int], allocated: Mapping[str, int], ratios: Mapping[str, int]) -> int:
        total = weight_sum = 0
        for resource, weight, pod_limit in terms:
            percent = ratios.get(resource)
            if percent is None:
                continue
            capacity = allocatable.get(resource, 0) * percent // 100
            if capacity <= 0:
                continue
            free = (capacity - allocated.get(resource, 0) - pod_limit) * MAX_NODE_SCORE
            total += (free // capacity if free >= 0 else -(-free // capacity)) * weight
            weight_sum += weight
        return trunc_div(total, weight_sum) if weight_sum else 0

    return raw
