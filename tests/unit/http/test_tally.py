"""The request-path tallies expose exactly what prometheus_client's Counter and Histogram would."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from limitguard.http.metrics import ANSWER_VIEWS
from limitguard.http.tally import CounterTally, CounterViews, HistogramTally

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


def test_the_answer_views_read_as_the_three_counters_they_replace() -> None:
    """One count per answer key, exposed as the admissions, decisions and fail-open counters that an
    answer used to update one by one."""
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    views = CounterViews(ANSWER_VIEWS, ours)
    admissions, decisions, fail_open = (
        Counter(view.name, view.documentation, view.labelnames, registry=theirs) for view in ANSWER_VIEWS
    )
    answers = [
        ("validate", "pods", "binding", True, "allow", "fits"),
        ("validate", "pods", "binding", False, "deny", "exceeds"),
        ("validate", "pods", "", True, "allow", "fits"),
        ("validate", "pods", "binding", True, "allow", "state-incomplete"),
        ("mutate", "pods", "", True, "mutate", "defaulted"),
        ("validate", "pods", "binding", True, "allow", "fits"),
        ("validate", "pods", "", False, "deny", "state-incomplete"),  # denied: not a fail-open answer
    ]
    for key in answers:
        views.inc(key)
        webhook, resource, subresource, allowed, action, reason = key
        decision = "allowed" if allowed else "denied"
        admissions.labels(
            webhook, f"{resource}/{subresource}" if subresource else resource, decision, action
        ).inc()
        decisions.labels(webhook, decision, reason).inc()
        if allowed and reason in ("internal-error", "state-incomplete"):
            fail_open.labels(webhook, reason).inc()
    assert sorted(exposition(ours)) == sorted(exposition(theirs))
    exposed = exposition(ours)
    assert (
        'limitguard_admissions_total{action="allow",decision="allowed",resource="pods/binding",webhook="validate"} 3.0'
        in exposed
    )
    assert 'limitguard_decisions_total{decision="denied",reason="exceeds",webhook="validate"} 1.0' in exposed
    assert 'limitguard_fail_open_answers_total{reason="state-incomplete",webhook="validate"} 1.0' in exposed
