"""NodeResourcesFitPlus score (Koordinator "Enhanced NodeResourceFit" design, 2024-12-24).

A strategy and a weight per resource, instead of one strategy for all:

    MostAllocated(R)  = requested(R) x 100 / allocatable(R)                 (requested capped at allocatable)
    LeastAllocated(R) = (allocatable(R) - requested(R)) x 100 / allocatable(R)  (0 once over)
    score             = sum(score(R) x weight(R)) / sum(weight(R))

requested(R) = the node's summed requests + the pod's request, cpu/memory with the scheduler's
non-zero defaults (100m / 200Mi per container that sets neither). As in Koordinator's plugin only
the configured resources the pod really requests are scored (a GPU MostAllocated rule does not pull
cpu-only pods onto GPU nodes); with none of them the node scores 100. A resource the node has no
allocatable of scores 0.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from limitguard.core.scoring.normalize import MAX_NODE_SCORE
from limitguard.core.scoring.scarce import is_resource_type

NAME = "NodeResourcesFitPlus"


class Strategy(enum.StrEnum):
    MOST_ALLOCATED = "MostAllocated"
    LEAST_ALLOCATED = "LeastAllocated"


@dataclass(frozen=True, slots=True)
class ResourceStrategy:
    type: Strategy
    weight: int


def _default_resources() -> Mapping[str, ResourceStrategy]:
    return {
        "cpu": ResourceStrategy(Strategy.LEAST_ALLOCATED, 1),
        "memory": ResourceStrategy(Strategy.LEAST_ALLOCATED, 1),
    }


@dataclass(frozen=True)
class FitPlusArgs:
    """`NodeResourcesFitPlusArgs` / `ResourceTypesArgs`: resources -> {type, weight}."""

    resources: Mapping[str, ResourceStrategy] = field(default_factory=_default_resources)


def most_allocated(requested: int, allocatable: int) -> int:
    if allocatable <= 0:
        return 0
    return min(requested, allocatable) * MAX_NODE_SCORE // allocatable


def least_allocated(requested: int, allocatable: int) -> int:
    if allocatable <= 0 or requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


NodeFitScorer = Callable[[Mapping[str, int], Mapping[str, int]], int]


def fit_plus_scorer(
    pod_types: Iterable[str], pod_requests: Mapping[str, int], resources: Mapping[str, ResourceStrategy]
) -> NodeFitScorer:
    """The score function for one pod, `(node requested, allocatable) -> 0..100`, prepared once.

    *pod_types* are the resources the pod really requests; only configured ones are scored.
    """
    terms = tuple(
        (resource, pod_requests.get(resource, 0), strategy.type is Strategy.MOST_ALLOCATED, strategy.weight)
        for resource in sorted(pod_types)
        if (strategy := resources.get(resource)) is not None and is_resource_type(resource)
    )
    weight_sum = sum(weight for *_, weight in terms)

    def score(node_requested: Mapping[str, int], allocatable: Mapping[str, int]) -> int:
        if not weight_sum:
            return MAX_NODE_SCORE
        total = 0
        for resource, pod_request, most, weight in terms:
            node_allocatable = allocatable.get(resource, 0)
            requested = node_requested.get(resource, 0) + pod_request
            if most:
                total += most_allocated(requested, node_allocatable) * weight
            else:
                total += least_allocated(requested, node_allocatable) * weight
        return total // weight_sum

    return score
