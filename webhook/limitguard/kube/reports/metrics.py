"""The findings keeper as metrics, read from its plain numbers at scrape time (the leader's)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from limitguard.core.config import Enforcement
from limitguard.kube.reports.desired import finding_of
from limitguard.kube.reports.keeper import FindingsKeeper


class FindingsCollector(Collector):
    def __init__(self, keeper: FindingsKeeper) -> None:
        self.keeper = keeper

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        keeper = self.keeper
        if keeper.writer is not None:
            available = GaugeMetricFamily(
                "limitguard_reports_api_available",
                "1 when the policy report API limitguard writes is served (its CRDs are installed), 0 when not",
                labels=["api"],
            )
            if keeper.available is not None:
                available.add_metric([keeper.rest.api.api_version], 1.0 if keeper.available else 0.0)
            yield available
            reports = GaugeMetricFamily(
                "limitguard_reports",
                "Policy reports limitguard keeps, by finding (node, pod, scheduler-config)",
                labels=["finding"],
            )
            if keeper.last is not None:
                for finding, count in sorted(Counter(finding_of(r) for r in keeper.reports()).items()):
                    reports.add_metric([finding], count)
            yield reports
        violations = GaugeMetricFamily(
            "limitguard_pod_violations",
            "Pods running on a node over its ratio for a resource they limit, in namespaces under Warn or DryRun",
            labels=["enforcement"],
        )
        dropped = GaugeMetricFamily(
            "limitguard_pod_reports_dropped",
            "Pods in violation past reports.podReports.max: they get no report",
        )
        if keeper.last is not None:
            for action in (Enforcement.WARN, Enforcement.DRY_RUN):
                violations.add_metric([action.value], keeper.last.pod_violations.get(action.value, 0))
            dropped.add_metric([], keeper.last.pod_reports_dropped)
        yield violations
        yield dropped
        if keeper.recorder is not None:
            events = CounterMetricFamily(
                "limitguard_events_recorded",
                "Events limitguard recorded, by reason (repeats included: they are written as a series)",
                labels=["reason"],
            )
            for reason, count in sorted(keeper.recorder.recorded.items()):
                events.add_metric([reason], count)
            yield events
