"""Prometheus metrics. One registry per server so tests can run many servers in one process."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from limitguard.admission.review import target_of
from limitguard.core.config import Config
from limitguard.core.limitaware import effective_ratios
from limitguard.core.oversubscription import DEFAULT_SERIES_LIMIT
from limitguard.core.ratios import limit_capacity
from limitguard.http.memo_metrics import MemoCollector
from limitguard.http.node_ratio_metrics import NodeRatioCollector
from limitguard.http.tally import CounterTally, CounterView, CounterViews, HistogramTally
from limitguard.state.store import ClusterState

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
# Allowed answers that checked nothing: a handler bug, or a cluster state that cannot decide yet
# (whileNotReady: Allow). Counted apart so an alert can tell enforcement is silently off.
FAIL_OPEN_REASONS = frozenset({"internal-error", "state-incomplete"})

# An admission answer is counted once, by this key; the three counters below are views of it.
AnswerKey = tuple[str, str, str, bool, str, str]  # webhook, resource, subresource, allowed, action, reason


def _decision(allowed: bool) -> str:
    return "allowed" if allowed else "denied"


def _by_resource(key: AnswerKey) -> tuple[str, ...]:
    webhook, resource, subresource, allowed, action, _ = key
    return webhook, target_of(resource, subresource), _decision(allowed), action


def _by_reason(key: AnswerKey) -> tuple[str, ...]:
    webhook, _, _, allowed, _, reason = key
    return webhook, _decision(allowed), reason


def _fail_open(key: AnswerKey) -> tuple[str, ...] | None:
    webhook, _, _, allowed, _, reason = key
    return (webhook, reason) if allowed and reason in FAIL_OPEN_REASONS else None


ANSWER_VIEWS = (
    CounterView(
        "limitguard_admissions",
        "Admission requests answered",
        ("webhook", "resource", "decision", "action"),
        _by_resource,
    ),
    # `reason` is one of a fixed set of codes (fits, over-ratio, excluded, ...): bounded cardinality.
    CounterView(
        "limitguard_decisions",
        "Admission answers by webhook, decision and reason",
        ("webhook", "decision", "reason"),
        _by_reason,
    ),
    CounterView(
        "limitguard_fail_open_answers",
        "Admission requests answered allowed without a check (internal error, cluster state not ready)",
        ("webhook", "reason"),
        _fail_open,
    ),
)


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
        # The request path's metrics are tallies (limitguard.http.tally): no lock, no labels() call.
        self.answers = CounterViews(ANSWER_VIEWS, self.registry)  # keyed by AnswerKey
        self.latency = HistogramTally(
            "limitguard_admission_duration_seconds",
            "Time to answer an admission request",
            ["webhook"],
            LATENCY_BUCKETS,
            self.registry,
        )
        self.bad_requests = CounterTally(
            "limitguard_bad_requests",
            "Requests answered with an HTTP error",
            ["webhook", "status"],
            self.registry,
        )
        self.watch_restarts = Counter(
            "limitguard_watch_restarts", "Watch streams restarted", ["kind"], registry=self.registry
        )
        self.relists = Counter("limitguard_relists", "Full relists", ["kind"], registry=self.registry)
        self.watch_events = Counter(
            "limitguard_watch_events", "Watch events applied", ["kind", "type"], registry=self.registry
        )
        self.watch_stalls = Counter(
            "limitguard_watch_stalls",
            "Watch streams found silent past their timeout (a dead path) and restarted",
            ["kind"],
            registry=self.registry,
        )
        self.ledger_unwritten = Counter(
            "limitguard_ledger_unwritten_released",
            "Ledger entries released because the apiserver never wrote what they held room for",
            ["hold"],
            registry=self.registry,
        )
        self.placement_hints = CounterTally(
            "limitguard_placement_hints",
            "Placement hints given (by operator) and skipped (by reason) at pod creation",
            ["outcome", "reason"],
            self.registry,
        )
        self.extender_requests = CounterTally(
            "limitguard_extender_requests",
            "Extender calls answered, by verb and outcome",
            ["verb", "outcome"],
            self.registry,
        )
        self.extender_duration = HistogramTally(
            "limitguard_extender_duration_seconds",
            "Time to answer an extender call",
            ["verb"],
            LATENCY_BUCKETS,
            self.registry,
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
        self.registry.register(MemoCollector())
        self.registry.register(NodeRatioCollector(state, config, node_ratio_series_limit))
