"""Does a pod's limit fit a node's remaining limit capacity? (SPEC 2)"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from limitguard.core.podlimits import FROM_LIMIT_AND_REQUEST, FROM_REQUEST
from limitguard.core.quantity import format_units
from limitguard.core.ratios import limit_capacity

# How a denial names a pod limit that counts requests (PodAmounts.sources).
SOURCE_TEXT = {
    FROM_REQUEST: "its request; no limit set",
    FROM_LIMIT_AND_REQUEST: "with the requests of containers that set no limit",
}


def source_note(source: str) -> str:
    """` (its request; no limit set)` after a pod's limit that is its request; empty for a limit."""
    return f" ({SOURCE_TEXT[source]})" if source else ""


@dataclass(frozen=True, slots=True)
class LimitRow:
    """One resource of one node against its limit capacity (SPEC 2), with the pod being placed.

    The one row behind a denial's shortfall, explain's per-resource check and audit's overage.
    """

    resource: str
    allocatable: int
    percent: int
    allocated: int  # summed limits on the node, ledger included
    pod_limit: int = 0  # the pod being placed; 0 when none is (audit)
    limit_source: str = ""  # FROM_REQUEST or FROM_LIMIT_AND_REQUEST when pod_limit counts requests
    ratio_source: str = ""  # where the percent came from: "pool gpu", "node annotation", "cluster default"

    @property
    def capacity(self) -> int:
        return limit_capacity(self.allocatable, self.percent)

    @property
    def after(self) -> int:
        return self.allocated + self.pod_limit

    @property
    def remaining(self) -> int:
        return max(self.capacity - self.allocated, 0)

    @property
    def fits(self) -> bool:
        """A resource the pod does not use never fails, even on a node already over its ratio."""
        return self.pod_limit <= 0 or self.after <= self.capacity

    @property
    def excess(self) -> int:
        return self.allocated - self.capacity

    @property
    def actual_percent(self) -> float:
        """Summed limits as a percent of allocatable (what the ratio caps)."""
        return 100.0 * self.allocated / self.allocatable if self.allocatable else float("inf")

    def fmt(self, amount: int) -> str:
        return format_units(self.resource, amount)

    def describe(self) -> str:
        """The shortfall sentence, e.g. `cpu limit 4 exceeds remaining 0 (allocated 10 of capacity 10 = ...)`;
        `cpu limit 4 (its request; no limit set) exceeds ...` when the pod sets no cpu limit."""
        return (
            f"{self.resource} limit {self.fmt(self.pod_limit)}{source_note(self.limit_source)} exceeds remaining "
            f"{self.fmt(self.remaining)} "
            f"(allocated {self.fmt(self.allocated)} of capacity {self.fmt(self.capacity)} = "
            f"{self.fmt(self.allocatable)} allocatable x {self.percent}%{self.ratio_note})"
        )

    @property
    def ratio_note(self) -> str:
        """` (pool gpu)` after the percent: where the node's ratio came from."""
        return f" ({self.ratio_source})" if self.ratio_source else ""

    def brief(self) -> str:
        """A short form for admission warnings, which must stay under 120 characters."""
        return f"{self.resource} {self.fmt(self.pod_limit)} > {self.fmt(self.remaining)} left"


def shortfalls(
    pod_limits: Mapping[str, int],
    allocatable: Mapping[str, int],
    allocated: Mapping[str, int],
    ratios: Mapping[str, int],
    sources: Mapping[str, str] | None = None,
    ratio_source: str = "",
) -> list[LimitRow]:
    """Every checked resource where pod limit > capacity - allocated; empty means the pod fits.

    A resource the pod does not use (limit 0) never fails, even on a node already over its ratio:
    the pod adds nothing there. *sources*: the pod's PodAmounts.sources, named in each row;
    *ratio_source*: where the node's ratio map came from (core.pools.RatioSource.describe()).
    """
    found: list[LimitRow] = []
    sources = sources or {}
    for resource, pod_limit in pod_limits.items():
        percent = ratios.get(resource)
        if percent is None or pod_limit <= 0:
            continue
        row = LimitRow(
            resource,
            allocatable.get(resource, 0),
            percent,
            allocated.get(resource, 0),
            pod_limit,
            sources.get(resource, ""),
            ratio_source,
        )
        if not row.fits:
            found.append(row)
    return found


def fits(
    pod_limits: Iterable[tuple[str, int]],
    allocatable: Mapping[str, int],
    allocated: Mapping[str, int],
    ratios: Mapping[str, int],
) -> bool:
    """`not shortfalls(...)`, without building anything: a binding's check and the inner loop of
    scans over every node. *pod_limits* is (resource, limit) pairs, e.g. a mapping's items()."""
    for resource, pod_limit in pod_limits:
        percent = ratios.get(resource)
        # limit_capacity, inlined: this runs per binding and per node of a reference scan
        if (
            percent is not None
            and pod_limit > 0
            and pod_limit > allocatable.get(resource, 0) * percent // 100 - allocated.get(resource, 0)
        ):
            return False
    return True


def describe_node(node: str, found: list[LimitRow]) -> str:
    """`node "node1": cpu limit 4 exceeds remaining 0 (...); memory ...`"""
    return f'node "{node}": ' + "; ".join(shortfall.describe() for shortfall in found)
