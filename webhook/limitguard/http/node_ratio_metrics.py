"""Per-node limit-ratio gauges, computed at scrape time (the request path pays nothing for them).

Cardinality: at most `series_limit` (node, resource) pairs per gauge (two gauges), where a pair
exists only for a resource that has a ratio on that node (its `source` label, where the node's ratio
map came from, is one value per node, so it adds no series); `limitguard_node_ratio_series_dropped`
says how many pairs the limit left out (the lowest ratios go first).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from limitguard.core.config import Config
from limitguard.core.oversubscription import DEFAULT_SERIES_LIMIT, node_limit_ratios
from limitguard.state.store import ClusterState


class NodeRatioCollector(Collector):
    def __init__(self, state: ClusterState, config: Config, series_limit: int = DEFAULT_SERIES_LIMIT) -> None:
        self.state = state
        self.config = config
        self.series_limit = series_limit

    def collect(self) -> Iterator[GaugeMetricFamily]:
        ratios = node_limit_ratios(
            self.state.nodes(), self.state.committed, self.config.limit_aware, self.series_limit
        )
        used = GaugeMetricFamily(
            "limitguard_node_limit_ratio",
            "Summed container limits of the pods bound to a node / its allocatable, per checked resource",
            labels=["node", "resource", "source"],
        )
        allowed = GaugeMetricFamily(
            "limitguard_node_limit_ratio_allowed",
            "The node's limit-to-allocatable ratio for the resource (percent / 100)",
            labels=["node", "resource", "source"],
        )
        for item in ratios.kept:
            used.add_metric([item.node, item.resource, item.source], item.ratio)
            allowed.add_metric([item.node, item.resource, item.source], item.allowed)
        yield used
        yield allowed
        yield GaugeMetricFamily(
            "limitguard_node_ratio_series_dropped",
            "(node, resource) pairs left out of the node ratio gauges by the series limit",
            value=ratios.dropped,
        )
