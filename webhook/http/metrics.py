"""Prometheus metrics. One registry per server so tests can run many servers in one process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from limitguard.core.config import Config
from limitguard.core.limitaware import effective_ratios
from limitguard.core.oversubscription import DEFAULT_SERIES_LIMIT
from limitguard.core.ratios import limit_capacity
from limitguard.http.node_ratio_metrics import NodeRatioCollector
from limitguard.state.store import ClusterState
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector


def cached_children(metric: Any) -> Callable[..., Any]:
    """`metric.labels(*values)`, memoised: the client takes a lock and builds a key on every call,
    which costs more than the increment on a path answering thousands of requests a second."""
    children: dict[tuple[str, ...], Any] = {}

    def child(*values: str) -> Any:
        found = children.get(values)
        if found is None:
            found = children[values] = metric.labels(*values)
        return found

    return child


LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class StateCollector(Collector):
    """Gauges derived from the state at scrape time, so the request path pays nothing for them."""

    def __init__(
        self, state: ClusterState, config: Config, node_ratio_series_limit: int = DEFAULT_SERIES_LIMIT
    ) -> None:
        self.state = state
        self.config = config

    def collect(self) -> Iterator[GaugeMetricFamily]:
        objects = GaugeMetricFamily(
            "limitguard_state_objects", "Objects in the cluster state cache", labels=["kind"]
        )
        for kind, count in self.state.counts().items():
            objects.add_metric([kind], count)
        yield objects
        over = malformed = 0
        for node in self.state.nodes():
            malformed += node.ratio_problem is not None
            ratios = effective_ratios(node, self.config.limit_aware)
            committed = self.state.committed(node.name)
            over += any(
                committed.get(resource, 0) > limit_capacity(node.allocatable.get(resource, 0), percent)
                for resource, percent in ratios.items()
            )
        yield GaugeMetricFamily(
            "limitguard_nodes_over_ratio", "Nodes whose summed limits exceed capacity", value=over
        )
        yield GaugeMetricFamily(
            "limitguard_malformed_node_annotations",
            "Nodes with a malformed ratio annotation",
            value=malformed,
        )
        yield GaugeMetricFamily(
            "limitguard_ledger_entries", "Approved bindings not yet seen bound", value=len(self.state.ledger)
        )
        yield GaugeMetricFamily(
            "limitguard_state_ready", "1 once every kind is fully listed", value=int(self.state.ready)
        )


class Metrics:
    def __init__(
        self, state: ClusterState, config: Config, node_ratio_series_limit: int = DEFAULT_SERIES_LIMIT
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.admissions = Counter(
            "limitguard_admissions",
            "Admission requests answered",
            ["webhook", "resource", "decision", "action"],
            registry=self.registry,
        )
        # `reason` is one of a fixed set of codes (fits, over-ratio, excluded, ...): bounded cardinality.
        self.decisions = Counter(
            "limitguard_decisions",
            "Admission answers by webhook, decision and reason",
            ["webhook", "decision", "reason"],
            registry=self.registry,
        )
        self.fail_open = Counter(
            "limitguard_fail_open_answers",
            "Admission requests answered allowed without a check (internal error, cluster state not ready)",
            ["webhook", "reason"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "limitguard_admission_duration_seconds",
            "Time to answer an admission request",
            ["webhook"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.bad_requests = Counter(
            "limitguard_bad_requests",
            "Requests answered with an HTTP error",
            ["webhook", "status"],
            registry=self.registry,
        )
        self.watch_restarts = Counter(
            "limitguard_watch_restarts", "Watch streams restarted", ["kind"], registry=self.registry
        )
        self.relists = Counter("limitguard_relists", "Full relists", ["kind"], registry=self.registry)
        self.watch_events = Counter(
            "limitguard_watch_events", "Watch events applied", ["kind", "type"], registry=self.registry
        )
        self.extender_requests = Counter(
            "limitguard_extender_requests",
            "Extender calls answered, by verb and outcome",
            ["verb", "outcome"],
            registry=self.registry,
        )
        self.extender_duration = Histogram(
            "limitguard_extender_duration_seconds",
            "Time to answer an extender call",
            ["verb"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.extender_filtered_nodes = Counter(
            "limitguard_extender_filtered_nodes",
            "Candidate nodes the filter removed for exceeding their limit-to-allocatable ratio",
            registry=self.registry,
        )
        self.extender_unknown_nodes = Counter(
            "limitguard_extender_unknown_nodes",
            "Candidate nodes not in limitguard's cluster state (passed, scored 0)",
            registry=self.registry,
        )
        self.registry.register(StateCollector(state, config))
        self.registry.register(NodeRatioCollector(state, config, node_ratio_series_limit))
