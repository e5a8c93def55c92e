"""Score weights: warn when one score plugin outweighs all the others together, as it then decides
placement alone (the framework's weighted sum, pkg/scheduler/framework/runtime/framework.go)."""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, warning
from ..fields.values import as_dict, as_list
from ..tables.readers import Reader
from .effective import effective_score_weights

__all__ = ["check_score_dominance"]


def check_score_dominance(profile: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """Warn when one score plugin outweighs all the others together: it then decides placement alone."""
    weights = effective_score_weights(profile, reader)
    if len(weights) < 2:
        return []
    heaviest = max(weights, key=lambda n: weights[n])
    others = sum(w for n, w in weights.items() if n != heaviest)
    if weights[heaviest] <= others or heaviest in reader.scheduler.dominant_by_design:
        return []  # e.g. koord-scheduler's Reservation: a node holding the pod's reservation must win
    score_path = path_join(path, "plugins", "score")
    for j, plugin in enumerate(as_list(as_dict(as_dict(profile.get("plugins")).get("score")).get("enabled"))):
        if as_dict(plugin).get("name") == heaviest:
            score_path = path_join(score_path, "enabled", j, "weight")
            break
    detail = (
        f"score plugin {json.dumps(heaviest)} has weight {weights[heaviest]}, more than all other score "
        f"plugins together ({others}: {', '.join(sorted(n for n in weights if n != heaviest))}); it "
        "alone decides the ranking whenever its scores differ"
    )
    return [warning(score_path, detail, "score.dominant-weight", weights[heaviest])]
