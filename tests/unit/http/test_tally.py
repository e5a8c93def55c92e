"""The request-path tallies expose exactly what prometheus_client's Counter and Histogram would."""

from __future__ import annotations

from limitguard.http.tally import CounterTally, HistogramTally
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

BUCKETS = (0.001, 0.01, 0.1)


def exposition(registry: CollectorRegistry) -> list[str]:
    """The text format, without the optional `_created` series the tallies leave out."""
    return [line for line in generate_latest(registry).decode().splitlines() if "_created" not in line]


def test_a_counter_tally_reads_as_a_prometheus_counter() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    tally = CounterTally("lg_answers", "Answers", ["webhook", "decision"], ours)
    counter = Counter("lg_answers", "Answers", ["webhook", "decision"], registry=theirs)
    for labels, amount in [
        (("validate", "allowed"), 1),
        (("validate", "denied"), 2),
        (("validate", "allowed"), 3),
    ]:
        tally.inc(labels, amount)
        counter.labels(*labels).inc(amount)
    assert exposition(ours) == exposition(theirs)
    assert 'lg_answers_total{decision="allowed",webhook="validate"} 4.0' in exposition(ours)


def test_a_histogram_tally_reads_as_a_prometheus_histogram_bounds_included() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    tally = HistogramTally("lg_seconds", "Time", ["verb"], BUCKETS, ours)
    histogram = Histogram("lg_seconds", "Time", ["verb"], buckets=BUCKETS, registry=theirs)
    samples = [("filter", 0.0005), ("filter", 0.001), ("filter", 0.05), ("prioritize", 2.0), ("filter", 0.1)]
    for verb, seconds in samples:  # 0.001 and 0.1 sit exactly on a bound: `le` counts them in it
        tally.series((verb,)).observe(seconds)
        histogram.labels(verb).observe(seconds)
    assert exposition(ours) == exposition(theirs)
    assert 'lg_seconds_bucket{le="0.001",verb="filter"} 2.0' in exposition(ours)


def test_a_series_is_looked_up_once_and_shared() -> None:
    tally = HistogramTally("lg_seconds", "Time", ["verb"], BUCKETS, CollectorRegistry())
    assert tally.series(("filter",)) is tally.series(("filter",))
    assert tally.series(("filter",)) is not tally.series(("prioritize",))
