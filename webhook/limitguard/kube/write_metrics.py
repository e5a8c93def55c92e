"""The cluster writes as metrics, read from the queue's plain counters at scrape time."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from limitguard.kube.roomlabels import RoomLabeller
from limitguard.kube.writes import ClusterWrites


class ClusterWritesCollector(Collector):
    def __init__(self, writes: ClusterWrites, labeller: RoomLabeller | None = None) -> None:
        self.writes = writes
        self.labeller = labeller

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        outcomes = CounterMetricFamily(
            "limitguard_cluster_writes",
            "Writes limitguard made (or found unneeded) to cluster objects, by kind of write and result",
            labels=["kind", "result"],
        )
        for (kind, outcome), count in sorted(self.writes.outcomes.items()):
            outcomes.add_metric([kind, outcome.value], count)
        yield outcomes
        deferred = CounterMetricFamily(
            "limitguard_cluster_writes_deferred",
            "Writes that waited for the clusterWrites rate limit, by kind of write",
            labels=["kind"],
        )
        for kind, count in sorted(self.writes.deferred.items()):
            deferred.add_metric([kind], count)
        yield deferred
        yield GaugeMetricFamily(
            "limitguard_cluster_writes_queued",
            "Writes waiting in the queue (one per object at most)",
            value=self.writes.queued(),
        )
        if self.labeller is not None:
            yield GaugeMetricFamily(
                "limitguard_room_labels_stalest_seconds",
                "How long the node whose limit-room labels have differed from its room the longest has "
                "waited for its write (0: every label is current)",
                value=self.labeller.stalest_seconds(),
            )
