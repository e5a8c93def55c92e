"""Per-node limit ratios (summed limits / allocatable) for every checked resource, bounded in number.

Feeds the `limitguard_node_limit_ratio` gauge: the dashboard shows which nodes are oversubscribed and
by how much. Only resources that have a ratio on a node are reported (nodes x checked resources
pairs), and at most *limit* pairs, the highest ratios first, so a large cluster cannot flood
Prometheus with series. Pure: the caller hands in nodes and their sums.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from limitguard.core.config import LimitAwareConfig
from limitguard.core.limitaware import NodeLike, effective_ratios

DEFAULT_SERIES_LIMIT = 5000  # (node, resource) pairs: e.g. 2500 nodes x cpu and memory


@dataclass(frozen=True)
class NodeRatio:
    node: str
    resource: str
    ratio: float  # summed limits / allocatable (1.5 = 150 %); +Inf when allocatable is 0 and limits are not
    allowed: float  # the node's ratio for this resource as a fraction (percent / 100)
    source: str = "default"  # where the ratio came from: annotation, pool:<name> or default


@dataclass(frozen=True)
class NodeRatios:
    kept: list[NodeRatio]
    dropped: int  # pairs left out because of the limit


def ratio_of(allocated: int, allocatable: int) -> float:
    if allocatable > 0:
        return allocated / allocatable
    return float("inf") if allocated > 0 else 0.0


def node_limit_ratios(
    nodes: Iterable[NodeLike],
    committed_of: Callable[[str], Mapping[str, int]],
    config: LimitAwareConfig,
    limit: int = DEFAULT_SERIES_LIMIT,
) -> NodeRatios:
    """Every (node, checked resource) ratio; past *limit* pairs only the highest ratios are kept."""
    found: list[NodeRatio] = []
    for node in nodes:
        ratios = effective_ratios(node, config)
        if not ratios:
            continue
        name, source = node.traits.name, node.ratio_source.label
        committed = committed_of(name)
        for resource, percent in ratios.items():
            amount = committed.get(resource, 0)
            ratio = ratio_of(amount, node.allocatable.get(resource, 0))
            found.append(NodeRatio(name, resource, ratio, percent / 100, source))
    limit = max(limit, 0)
    if len(found) <= limit:
        return NodeRatios(found, 0)
    found.sort(key=lambda item: (-item.ratio, item.node, item.resource))
    return NodeRatios(found[:limit], len(found) - limit)
