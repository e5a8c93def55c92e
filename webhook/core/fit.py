"""Does a pod's limit fit a node's remaining limit capacity? (SPEC 2)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from limitguard.core.quantity import format_units
from limitguard.core.ratios import limit_capacity


@dataclass(frozen=True, slots=True)
class Shortfall:
    """One resource of one node that cannot take the pod's limit."""

    node: str
    resource: str
    pod_limit: int
    allocated: int
    allocatable: int
    percent: int

    @property
    def capacity(self) -> int:
        return limit_capacity(self.allocatable, self.percent)

    @property
    def remaining(self) -> int:
        return max(self.capacity - self.allocated, 0)

    def describe(self) -> str:
        """The full sentence, e.g. `cpu limit 4 exceeds remaining 0 (allocated 10 of capacity 10 = ...)`."""
        fmt = lambda amount: format_units(self.resource, amount)  # noqa: E731
        return (
            f"{self.resource} limit {fmt(self.pod_limit)} exceeds remaining {fmt(self.remaining)} "
            f"(allocated {fmt(self.allocated)} of capacity {fmt(self.capacity)} = "
            f"{fmt(self.allocatable)} allocatable x {self.percent}%)"
        )

    def brief(self) -> str:
        """A short form for admission warnings, which must stay under 120 characters."""
        fmt = lambda amount: format_units(self.resource, amount)  # noqa: E731
        return f"{self.resource} {fmt(self.pod_limit)} > {fmt(self.remaining)} left"


def shortfalls(
    node: str,
    pod_limits: Mapping[str, int],
    allocatable: Mapping[str, int],
    allocated: Mapping[str, int],
    ratios: Mapping[str, int],
) -> list[Shortfall]:
    """Every checked resource where pod limit > capacity - allocated; empty means the pod fits.

    A resource the pod does not use (limit 0) never fails, even on a node already over its ratio:
    the pod adds nothing there.
    """
    found: list[Shortfall] = []
    for resource, pod_limit in pod_limits.items():
        percent = ratios.get(resource)
        if percent is None or pod_limit <= 0:
            continue
        node_allocatable = allocatable.get(resource, 0)
        node_allocated = allocated.get(resource, 0)
        if pod_limit > limit_capacity(node_allocatable, percent) - node_allocated:
            found.append(Shortfall(node, resource, pod_limit, node_allocated, node_allocatable, percent))
    return found


def fits(
    pod_limits: list[tuple[str, int]],
    allocatable: Mapping[str, int],
    allocated: Mapping[str, int],
    ratios: Mapping[str, int],
) -> bool:
    """`not shortfalls(...)`, without building anything: the inner loop of scans over every node.

    *pod_limits* is a list of (resource, limit) with limit > 0.
    """
    for resource, pod_limit in pod_limits:
        percent = ratios.get(resource)
        if percent is not None and pod_limit > allocatable.get(resource, 0) * percent // 100 - allocated.get(
            resource, 0
        ):
            return False
    return True


def describe_node(node: str, found: list[Shortfall]) -> str:
    """`node "node1": cpu limit 4 exceeds remaining 0 (...); memory ...`"""
    return f'node "{node}": ' + "; ".join(shortfall.describe() for shortfall in found)
