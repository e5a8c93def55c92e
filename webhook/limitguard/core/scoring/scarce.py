"""ScarceResourceAvoidance score (Koordinator "Enhanced NodeResourceFit" design, 2024-12-24).

Keeps pods that do not need a scarce resource (GPUs) off the nodes that have it:

    leftover = node resource types - pod resource types
    scarce   = leftover ∩ configured scarce resources
    score    = (|leftover| - |scarce|) x 100 / |leftover|, or 100 when leftover or scarce is empty

A node's types are the resources it has a positive allocatable of; a pod's types are those it
*really* requests (no non-zero defaults). Like the scheduler's NodeInfo, only cpu, memory,
ephemeral-storage and scalar resources (extended, hugepages-*, attachable-volumes-*, any prefixed
name) are types; `pods` and other unprefixed names are not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from limitguard.core.scoring.normalize import MAX_NODE_SCORE

NAME = "ScarceResourceAvoidance"

_NATIVE_TYPES = frozenset({"cpu", "memory", "ephemeral-storage"})


@dataclass(frozen=True)
class ScarceResourceArgs:
    """`ScarceResourceAvoidanceArgs`: the scarce resource names (default: the design's GPU example)."""

    resources: frozenset[str] = field(default_factory=lambda: frozenset({"nvidia.com/gpu"}))


def is_resource_type(name: str) -> bool:
    """Would the scheduler's framework.Resource hold this resource (native or scalar)?"""
    return (
        name in _NATIVE_TYPES
        or "/" in name
        or name.startswith("hugepages-")
        or name.startswith("attachable-volumes-")
    )


def resource_types(amounts: Mapping[str, int]) -> frozenset[str]:
    """Resource types with a positive amount (a node's allocatable, or a pod's real requests)."""
    return frozenset(name for name, amount in amounts.items() if amount > 0 and is_resource_type(name))


def scarce_resource_score(
    node_types: frozenset[str], pod_types: Iterable[str], scarce: frozenset[str]
) -> int:
    """0..100: the share of the node's unneeded resource types that are not scarce."""
    leftover = node_types.difference(pod_types)
    if not leftover:
        return MAX_NODE_SCORE
    scarce_left = len(leftover & scarce)
    if scarce_left == 0:
        return MAX_NODE_SCORE
    return (len(leftover) - scarce_left) * MAX_NODE_SCORE // len(leftover)
