"""Counts of what the connection and body bounds (limitguard.http.limits) turned away, as metrics.

The bounds count into plain integers on the serving path; the collector reads them at scrape time,
so a flood of refused connections costs an addition each, not a metrics call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

# Why a connection or a body was refused: its address holds its share already (peer-share), or the
# server is full and no address holds more than the newcomer's (total).
REASONS = ("peer-share", "total")


def _by_reason() -> dict[str, int]:
    return dict.fromkeys(REASONS, 0)


@dataclass
class Refusals:
    """What the bounds refused or closed since the server started."""

    connections_refused: dict[str, int] = field(default_factory=_by_reason)
    connections_displaced: int = 0  # waiting (or body-receiving) connections closed to make room
    connections_timed_out: int = 0  # headers (or the TLS handshake's end) not in by the header deadline
    bodies_refused: dict[str, int] = field(default_factory=_by_reason)  # 503 before or while reading
    bodies_displaced: int = 0  # bodies dropped (503) so that a smaller holder's could be read


class RefusalCollector(Collector):
    def __init__(self, refusals: Refusals) -> None:
        self.refusals = refusals

    def collect(self) -> Iterator[CounterMetricFamily]:
        counts = self.refusals
        for name, text, by_reason in (
            ("limitguard_connections_refused", "Connections closed on arrival", counts.connections_refused),
            ("limitguard_bodies_refused", "Request bodies refused with 503", counts.bodies_refused),
        ):
            family = CounterMetricFamily(name, f"{text}, by the bound they met", labels=["reason"])
            for reason in REASONS:
                family.add_metric([reason], by_reason[reason])
            yield family
        for name, text, value in (
            (
                "limitguard_connections_displaced",
                "Connections closed to make room for an address holding fewer",
                counts.connections_displaced,
            ),
            (
                "limitguard_connections_timed_out",
                "Connections closed because their request's headers were not in by the header deadline",
                counts.connections_timed_out,
            ),
            (
                "limitguard_bodies_displaced",
                "Request bodies dropped (503) to make room for an address holding fewer bytes",
                counts.bodies_displaced,
            ),
        ):
            yield CounterMetricFamily(name, text, value=value)
