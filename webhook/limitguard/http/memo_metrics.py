"""Every memo's counters as metrics, read at scrape time (limitguard.core.memo keeps plain numbers).

Memos of one name are summed: a process holds one of each in production, and a test process may
hold several states at once.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from limitguard.core.memo import MemoStats, live_memos

COUNTERS = (
    ("limitguard_memo_hits", "Lookups a memo answered", "hits"),
    (
        "limitguard_memo_misses",
        "Lookups a memo could not answer (worked out, then kept when small)",
        "misses",
    ),
    ("limitguard_memo_evictions", "Entries dropped because a new one would have passed a bound", "evictions"),
    ("limitguard_memo_refused_keys", "Keys larger than a memo's per-key bound, never kept", "refused"),
)
GAUGES = (
    ("limitguard_memo_entries", "Entries a memo holds", "entries"),
    ("limitguard_memo_bytes", "Bytes a memo counts for its entries (keys as measured, plus values)", "bytes"),
    ("limitguard_memo_max_bytes", "A memo's bound in bytes", "max_bytes"),
)


class MemoCollector(Collector):
    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        by_name: dict[str, list[MemoStats]] = {}
        for stats in live_memos():
            by_name.setdefault(stats.name, []).append(stats)
        for name, text, field in COUNTERS:
            counter = CounterMetricFamily(name, text, labels=["memo"])
            for memo, all_stats in by_name.items():
                counter.add_metric([memo], sum(getattr(stats, field) for stats in all_stats))
            yield counter
        for name, text, field in GAUGES:
            gauge = GaugeMetricFamily(name, text, labels=["memo"])
            for memo, all_stats in by_name.items():
                gauge.add_metric([memo], sum(getattr(stats, field) for stats in all_stats))
            yield gauge
