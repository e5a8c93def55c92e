"""Vector scans over the node table: eligibility masks, limit capacity, the unbound-pod check.

Each function answers exactly what its reference in webhook.core answers (check_unbound, fits,
node_overages), or None when the table cannot be exact for this question (a `wide` column, a
ratio too large for int64): the caller then takes the reference path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from webhook.cluster.table import NodeTable, exact
from webhook.core.config import LimitAwareConfig, UnboundPolicy
from webhook.core.eligibility import UNSCHEDULABLE_TAINT, Placement, Requirement
from webhook.core.limitaware import NodeLike, no_room
from webhook.core.verdict import Verdict, allow

MAX_DEFAULT_PERCENT = 1000  # BOUND x 1000 < 2**63: allocatable x percent never overflows


def _requirement_mask(table: NodeTable, requirement: Requirement) -> np.ndarray:
    if requirement.on_field:
        # matchFields: only metadata.name has a value; every other field is absent
        if requirement.key != "metadata.name":
            return np.full(table.size, requirement.matches_value(None), bool) & table.alive
        if requirement.operator == "In":
            return table.name_mask(requirement.values)
        if requirement.operator == "NotIn":
            return table.alive & ~table.name_mask(requirement.values)
        return table.name_mask(name for name in table.rows if requirement.matches_value(name))
    if requirement.operator == "In":
        masks = [table.label_mask(requirement.key, value) for value in requirement.values]
        return np.logical_or.reduce(masks) if masks else np.zeros(table.size, bool)
    has_key = table.label_mask(requirement.key, None)
    if requirement.operator == "Exists":
        return has_key
    if requirement.operator == "DoesNotExist":
        return table.alive & ~has_key
    if requirement.operator == "NotIn":
        masks = [table.label_mask(requirement.key, value) for value in requirement.values]
        return table.alive & ~np.logical_or.reduce(masks) if masks else table.alive.copy()
    return table.values_mask(requirement.key, requirement.matches_value)  # Gt / Lt


def eligible_mask(table: NodeTable, placement: Placement) -> np.ndarray:
    """Rows the scheduler would consider for the pod: Placement.rejection(node) is None."""
    mask = table.alive.copy()
    for key, value in placement.selector:
        mask &= table.label_mask(key, value)
    if placement.terms is not None:
        matched = np.zeros(table.size, bool)
        for term in placement.terms:
            if term:  # an empty term selects no node
                matched |= np.logical_and.reduce([_requirement_mask(table, r) for r in term])
        mask &= matched
    if not placement.tolerated(UNSCHEDULABLE_TAINT):
        mask &= ~table.unschedulable
    sets = table.live_taint_sets()
    if len(sets) > 1:
        admitted = np.zeros(len(table.taint_sets), bool)
        for index, taints in sets:
            admitted[index] = placement.tolerates_all(taints)
        mask &= admitted[table.taint_set]
    return mask


def capacity(
    table: NodeTable, resource: str, default_ratios: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """(ratio present, limit capacity) per row for *resource*; None when not exact in int64."""
    column = table.columns.get(resource)
    default = default_ratios.get(resource)
    if column is None:
        present = np.zeros(table.size, bool) if default is None else ~table.has_override
        return present, np.zeros(table.size, np.int64)
    if column.wide or (default is not None and default < 0):
        return None
    if default is not None and default > MAX_DEFAULT_PERCENT and len(column.allocatable):
        largest = int(np.abs(column.allocatable).max())
        if largest * default >= 2**62:
            return None
    overridden = table.has_override
    own = column.override_pct >= 0
    if default is None:
        return overridden & own, np.where(overridden, column.override_cap, 0)
    present = ~overridden | own
    return present, np.where(overridden, column.override_cap, column.allocatable * default // 100)


def fit_failures(
    table: NodeTable, rows: np.ndarray, used: list[tuple[str, int]], default_ratios: Mapping[str, int]
) -> list[np.ndarray] | None:
    """Per used resource, which of *rows* its limit does not fit (fits() per resource)."""
    failures = []
    for resource, amount in used:
        if not exact(amount):
            return None
        capacities = capacity(table, resource, default_ratios)
        if capacities is None:
            return None
        present, limit_capacity = capacities
        column = table.columns.get(resource)
        if column is None:
            room = limit_capacity[rows]
        else:
            room = limit_capacity[rows] - column.committed[rows] - column.held[rows]
        failures.append(present[rows] & (amount > room))
    return failures


def unbound_verdict(
    table: NodeTable,
    subject: str,
    pod_limits: Mapping[str, int],
    placement: Placement,
    record_of: Callable[[str], NodeLike | None],
    allocated_of: Callable[[str], Mapping[str, int]],
    config: LimitAwareConfig,
    *,
    exempt: bool = False,
) -> Verdict | None:
    """check_unbound over the table: the same Verdict, or None for the reference path."""
    if not pod_limits or config.unbound_pods is UnboundPolicy.IGNORE:
        return allow("fits")
    used = [(resource, amount) for resource, amount in pod_limits.items() if amount > 0]
    eligible = eligible_mask(table, placement)
    rows = np.flatnonzero(eligible)
    failures = fit_failures(table, rows, used, config.default_ratios)
    if failures is None:
        return None
    unfit = np.logical_or.reduce(failures) if failures else np.zeros(len(rows), bool)
    if not unfit.all():
        return allow("fits")
    # No eligible node has room: the reference builds the message from the first eligible node in
    # its iteration order (name order when a nodeSelector narrows the nodes, else upsert order).
    example: NodeLike | None = None
    if len(rows):
        order = table.name_rank() if placement.selector else table.seq
        example = record_of(table.names[int(rows[np.argmin(order[rows])])])
    return no_room(subject, pod_limits, len(rows), example, allocated_of, config, exempt=exempt)


def over_ratio_names(table: NodeTable, default_ratios: Mapping[str, int]) -> list[str] | None:
    """Nodes whose committed limits exceed their limit capacity for some resource (audit's
    node_overages is non-empty), found with one comparison per column; None: use the reference."""
    over = np.zeros(table.size, bool)
    for resource in set(table.columns) | set(default_ratios):
        capacities = capacity(table, resource, default_ratios)
        if capacities is None:
            return None
        present, limit_capacity = capacities
        column = table.columns.get(resource)
        if column is not None:
            over |= present & (column.committed > limit_capacity)
    return [table.names[row] for row in np.flatnonzero(over & table.alive).tolist()]
