"""Integer arithmetic shared by the scorers: Go-style division, min-max normalisation, weighting.

The scheduler plugins these scorers mirror are written in Go with int64 arithmetic, so division
truncates toward zero (-35 / 2 == -17, where Python's // gives -18). Reproducing that exactly keeps
our numbers equal to the score tables of the design documents.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_NODE_SCORE = 100  # framework.MaxNodeScore
MIN_NODE_SCORE = 0
MAX_EXTENDER_PRIORITY = 10  # k8s.io/kube-scheduler/extender/v1 MaxExtenderPriority


def trunc_div(numerator: int, denominator: int) -> int:
    """Integer division truncating toward zero, like Go's `/` on int64."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def min_max_normalise(raw: Sequence[int]) -> list[int]:
    """Map raw scores linearly onto 0..100 (lowest -> 0, highest -> 100).

    When every raw score is equal there is nothing to prefer and every node gets MIN_NODE_SCORE, as
    in the PodState and LimitAware NormalizeScore of the reference plugins. Exact integers (no
    float64 step), so e.g. 29/100 of the range stays 29 rather than becoming 28.999...
    """
    if not raw:
        return []
    lowest, highest = min(raw), max(raw)
    spread = highest - lowest
    if spread == 0:
        return [MIN_NODE_SCORE] * len(raw)
    scale = MAX_NODE_SCORE - MIN_NODE_SCORE
    return [(score - lowest) * scale // spread + MIN_NODE_SCORE for score in raw]


def to_extender_priority(score: int) -> int:
    """A 0..100 node score on the extender's 0..10 scale (truncated, clamped).

    kube-scheduler multiplies an extender's score by its configured weight and by
    MaxNodeScore / MaxExtenderPriority (10) before adding it to the in-tree plugin scores.
    """
    clamped = min(max(score, MIN_NODE_SCORE), MAX_NODE_SCORE)
    return clamped * MAX_EXTENDER_PRIORITY // MAX_NODE_SCORE
