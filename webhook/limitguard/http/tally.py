"""Request-path metrics kept as plain numbers and turned into Prometheus families at scrape time.

prometheus_client's Counter and Histogram take a lock on every update and build a key on every
`labels()` call: about 3 us per admission for the four updates an answer makes, a tenth of a
binding's whole policy check. Everything that updates these runs on the event loop thread, so a
dict of numbers is enough; a scrape from another thread (the plain-HTTP metrics port) copies the
dict first, which the GIL makes atomic. The exposition is the client's own (same names, types,
`_total`, `_bucket`/`_sum`/`_count`), without the optional `_created` series.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString


@dataclass(frozen=True)
class CounterView:
    """A labelled counter derived from a `CounterViews` key: *labels* maps a key to its label values,
    or None when the key does not count here."""

    name: str
    documentation: str
    labelnames: tuple[str, ...]
    labels: Callable[[Any], tuple[str, ...] | None]


class CounterViews(Collector):
    """One count per full key, several counters derived from it at scrape time: an event that several
    counters describe (an admission answer: by resource, by reason, fail-open or not) costs one
    dict update instead of one per counter."""

    def __init__(self, views: Sequence[CounterView], registry: CollectorRegistry) -> None:
        self.views = tuple(views)
        self.counts: dict[tuple[Any, ...], float] = {}
        registry.register(self)

    def inc(self, key: tuple[Any, ...], amount: float = 1) -> None:
        counts = self.counts
        counts[key] = counts.get(key, 0) + amount

    def describe(self) -> Iterator[Metric]:
        for view in self.views:
            yield CounterMetricFamily(view.name, view.documentation, labels=view.labelnames)

    def collect(self) -> Iterator[Metric]:
        counts = dict(self.counts)
        for view in self.views:
            totals: dict[tuple[str, ...], float] = {}
            for key, value in counts.items():
                labels = view.labels(key)
                if labels is not None:
                    totals[labels] = totals.get(labels, 0) + value
            family = CounterMetricFamily(view.name, view.documentation, labels=view.labelnames)
            for labels, value in totals.items():
                family.add_metric(labels, value)
            yield family


def _itself(labels: tuple[str, ...]) -> tuple[str, ...]:
    return labels


class CounterTally(CounterViews):
    """A labelled counter: `inc(label_values)`. One view, whose labels are the key itself."""

    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str], registry: CollectorRegistry
    ) -> None:
        super().__init__([CounterView(name, documentation, tuple(labelnames), _itself)], registry)


class LatencySeries:
    """One label set of a histogram: bucket counts (not cumulative) and the sum."""

    __slots__ = ("_bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one is +Inf
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self._bounds, seconds)] += 1  # le: a value equal to a bound is in it
        self.sum += seconds


class HistogramTally(Collector):
    """A labelled histogram; `series(label_values)` is looked up once per endpoint, not per request."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, tuple(labelnames)
        self.bounds = tuple(sorted(float(bound) for bound in buckets))
        self._series: dict[tuple[str, ...], LatencySeries] = {}
        registry.register(self)

    def series(self, labels: tuple[str, ...]) -> LatencySeries:
        found = self._series.get(labels)
        if found is None:
            found = self._series[labels] = LatencySeries(self.bounds)
        return found

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for labels, series in dict(self._series).items():
            counts, total = list(series.counts), series.sum
            cumulative, buckets = 0, []
            for bound, count in zip((*self.bounds, float("inf")), counts, strict=True):
                cumulative += count
                buckets.append((floatToGoString(bound), cumulative))
            family.add_metric(labels, buckets, total)
        yield family
