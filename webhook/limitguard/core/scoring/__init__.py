"""Pure node scorers for the extender and `explain`: LimitAware, NodeResourcesFitPlus,
ScarceResourceAvoidance and PodState, plus their normalisation and weighting. No I/O."""

from limitguard.core.scoring.combine import (
    DEFAULT_SCORERS,
    SCORER_NAMES,
    NodeFacts,
    PodFacts,
    ScorerColumn,
    ScorerConfig,
    ScoreSheet,
    default_args,
    score_candidates,
    with_all_scorers,
)

__all__ = [
    "DEFAULT_SCORERS",
    "SCORER_NAMES",
    "NodeFacts",
    "PodFacts",
    "ScoreSheet",
    "ScorerColumn",
    "ScorerConfig",
    "default_args",
    "score_candidates",
    "with_all_scorers",
]
