"""Vector scans over the node table: eligibility masks, limit capacity, the unbound-pod check.

Each function answers exactly what its reference in limitguard.core answers (check_unbound, fits,
node_overages), or None when the table cannot be exact for this question (a `wide` column, a
ratio too large for int64): the caller then takes the reference path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from limitguard.core.config import LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import UNSCHEDULABLE_TAINT, Placement, Requirement
from limitguard.core.limitaware import NodeLike, effective_ratios, no_room
from limitguard.core.response import Response, allowed
from limitguard.state.capacity import Capacity
from limitguard.state.store import ClusterState
from limitguard.state.table import NodeTable, exact


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


def capacity(table: NodeTable, resource: str, default_ratios: Mapping[str, int]) -> Capacity | None:
    """The node table's limit capacity of *resource*; None when it cannot be exact."""
    default = default_ratios.get(resource)
    if resource not in table.columns:  # no node and no pod has any: every capacity is 0
        present = np.zeros(table.size, bool) if default is None else table.alive & ~table.has_override
        zeros = np.zeros(table.size, np.int64)
        return Capacity(resource, default, present, zeros, zeros)
    return table.capacity(resource, default)


def fit_failures(
    table: NodeTable, used: list[tuple[str, int]], default_ratios: Mapping[str, int]
) -> list[np.ndarray] | None:
    """Per used resource, the rows its limit does not fit (fits() per resource), over all rows."""
    failures = []
    for resource, amount in used:
        if not exact(amount):
            return None
        found = capacity(table, resource, default_ratios)
        if found is None:
            return None
        failures.append(found.present & (amount > found.free))
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
    exempt_reason: str = "",
) -> Response | None:
    """check_unbound over the table: the same Response, or None for the reference path."""
    if not pod_limits or config.unbound_pods is UnboundPolicy.IGNORE:
        return allowed("fits")
    used = [(resource, amount) for resource, amount in pod_limits.items() if amount > 0]
    eligible = eligible_mask(table, placement)
    failures = fit_failures(table, used, config.default_ratios)
    if failures is None:
        return None
    taken = eligible.copy()
    for failed in failures:
        taken &= ~failed
    if taken.any():
        return allowed("fits")
    # No eligible node has room: the reference builds the message from the first eligible node in
    # its iteration order (name order when a nodeSelector narrows the nodes, else upsert order).
    rows = np.flatnonzero(eligible)
    example: NodeLike | None = None
    if len(rows):
        order = table.name_rank() if placement.selector else table.seq
        example = record_of(table.names[int(rows[np.argmin(order[rows])])])
    return no_room(
        subject,
        pod_limits,
        len(rows),
        example,
        allocated_of,
        config,
        exempt=exempt,
        exempt_reason=exempt_reason,
    )


def over_ratio_names(table: NodeTable, default_ratios: Mapping[str, int]) -> list[str] | None:
    """Nodes whose committed limits exceed their limit capacity for some resource (audit's
    node_overages is non-empty), found with one comparison per column; None: use the reference."""
    over = np.zeros(table.size, bool)
    for resource in set(table.columns) | set(default_ratios):
        found = capacity(table, resource, default_ratios)
        if found is None:
            return None
        column = table.columns.get(resource)
        if column is not None:
            over |= found.present & (column.committed > found.cap)
    return [table.names[row] for row in np.flatnonzero(over & table.alive).tolist()]


def screened_nodes(state: ClusterState, config: LimitAwareConfig) -> tuple[list[NodeLike], int, int]:
    """The nodes audit must look at, and how many others are within their ratio or have none.

    The node table finds the nodes over their ratio with one comparison per column; the others
    are only counted (a node without any ratio is reported as not checked, never as within it).
    """
    over = over_ratio_names(state.node_table(), config.default_ratios)
    if over is None:
        return list(state.nodes()), 0, 0
    listed = set(over)
    without_ratio = sum(
        1 for node in state.nodes() if node.traits.name not in listed and not effective_ratios(node, config)
    )
    others = state.counts()["nodes"] - len(listed)
    return [state.node(name) for name in over], others - without_ratio, without_ratio
