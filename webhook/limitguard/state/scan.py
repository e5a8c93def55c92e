"""Vector scans over the node table: eligibility masks, limit capacity, the unbound-pod check.

Each function answers exactly what the reference oracle (limitguard.testing.reference) answers
node by node. Where int64 cannot be exact (a `wide` column, a resource past MAX_COLUMNS, a limit
or a ratio product past int64) the same scan runs over that resource's column in Python integers
(state.exact): callers never choose a path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from limitguard.core.config import LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import UNSCHEDULABLE_TAINT, Placement, Requirement
from limitguard.core.limitaware import NodeLike, effective_ratios, no_room
from limitguard.core.memo import Cleared, Memo, MiB
from limitguard.core.response import MAX_MESSAGE_LENGTH, Response, allowed, retold
from limitguard.state.capacity import Capacity
from limitguard.state.columns import exact
from limitguard.state.exact import ExactTable, exact_capacity, exact_fit_mask
from limitguard.state.store import ClusterState
from limitguard.state.table import NodeTable

VERDICTS_KEPT = 256  # distinct pod shapes whose unbound verdict is remembered, per node-table version


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


def any_set(mask: np.ndarray) -> bool:
    """`mask.any()` for a bool array at a third of its cost: argmax stops at the first True, where
    ndarray.any goes through numpy's Python-level reduction wrapper (~9,000 instructions a call)."""
    return len(mask) > 0 and bool(mask[mask.argmax()])


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


@dataclass(frozen=True, slots=True)
class Eligible:
    """A placement's eligible rows, and the node the reference path would name in a denial."""

    mask: np.ndarray  # shared between requests: never modify it
    count: int
    example: int  # the first eligible row in the reference's order; -1 when none is eligible
    everyone: bool  # every node is eligible (no selector, nothing tainted or cordoned that matters)


def eligible_rows(table: NodeTable, placement: Placement) -> Eligible:
    """eligible_mask, memoised per placement until the node layout changes: pods of one workload
    (most pods: no selector, no tolerations) share it, so the scan does not rebuild it per request."""
    key = ("eligible", placement.key)
    found = table.layout_memo.get(key)
    if found is None:
        mask = eligible_mask(table, placement)
        rows = np.flatnonzero(mask)
        example = -1
        if len(rows):
            # a nodeSelector narrows nodes through the label index (name order), else upsert order
            order = table.name_rank() if placement.selector else table.seq
            example = int(rows[np.argmin(order[rows])])
        found = Eligible(mask, len(rows), example, len(rows) == len(table.rows))
        # a selector as large as the body is worked out each time, never kept
        table.layout_memo.put(key, found, value_bytes=mask.nbytes)
    return found


def capacity(table: NodeTable, resource: str, default_ratios: Mapping[str, int]) -> Capacity | None:
    """The node table's limit capacity of *resource*; None when it cannot be exact."""
    default = default_ratios.get(resource)
    if resource not in table.columns:  # no node and no pod has any: every capacity is 0
        present = np.zeros(table.size, bool) if default is None else table.alive & ~table.has_override
        zeros = np.zeros(table.size, np.int64)
        return Capacity(resource, default, present, zeros, zeros, table.alive)
    return table.capacity(resource, default)


def exact_or_wide_capacity(
    table: NodeTable, resource: str, amount: int, default_ratios: Mapping[str, int]
) -> Capacity:
    """The capacity a limit of *amount* is compared with: the int64 one, else (a value past int64
    on either side) the same in Python integers."""
    found = capacity(table, resource, default_ratios) if exact(amount) else None
    return found if found is not None else exact_capacity(table, resource, default_ratios.get(resource))


def fit_failures(
    table: NodeTable,
    used: list[tuple[str, int]],
    default_ratios: Mapping[str, int],
    held_elsewhere: Mapping[str, Mapping[str, int]] | None = None,
) -> list[np.ndarray]:
    """Per used resource, the rows its limit does not fit (fits() per resource), over all rows.
    *held_elsewhere*: per node, limits it keeps for others beyond its sums (nominated pods' room),
    a handful of nodes, each judged again with them."""
    failures = []
    for resource, amount in used:
        found = exact_or_wide_capacity(table, resource, amount, default_ratios)
        failed = found.present & (amount > found.free)
        for node, held in (held_elsewhere or {}).items():
            row = table.rows.get(node)
            extra = held.get(resource, 0)
            if row is not None and extra:
                failed[row] = bool(found.present[row]) and amount > int(found.free[row]) - extra
        failures.append(failed)
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
    sources: Mapping[str, str] | None = None,
) -> Response:
    """An unbound pod: is there any eligible node with room for its limits? The oracle's
    check_unbound, over the table."""
    if not pod_limits or config.unbound_pods is UnboundPolicy.IGNORE:
        return allowed("fits")
    eligible = eligible_rows(table, placement)
    rows = table.high_water
    # With every node eligible no mask is needed: a row without a node has no room (Capacity.room).
    taken = None if eligible.everyone else eligible.mask[:rows]
    fits = eligible.count > 0  # with no positive limit, any eligible node takes the pod
    for resource, amount in pod_limits.items():
        if not fits:
            break  # no eligible node has room for an earlier resource: the others cannot change that
        if amount <= 0:
            continue
        found = capacity(table, resource, config.default_ratios) if exact(amount) else None
        if found is None:  # past int64 on either side: the same test in Python integers
            found = exact_capacity(table, resource, config.default_ratios.get(resource))
            fitting = exact_fit_mask(found, amount, table.alive[:rows])
        elif amount > found.largest_room():
            fits = False  # no node has that much room, eligible or not: nothing to scan
            break
        else:
            fitting = found.room[:rows] >= amount
        taken = fitting if taken is None else taken & fitting  # new arrays: the memo stays as it is
        fits = any_set(taken)
    if fits:
        return allowed("fits")
    # No eligible node has room: the reference builds the message from the first eligible node in
    # its iteration order.
    example = record_of(table.names[eligible.example]) if eligible.example >= 0 else None
    return no_room(
        subject,
        pod_limits,
        eligible.count,
        example,
        allocated_of,
        config,
        exempt=exempt,
        exempt_reason=exempt_reason,
        sources=sources,
    )


@dataclass(frozen=True, slots=True)
class _Kept:
    """A remembered verdict, and what its key names by identity (kept alive, so no other object
    can take its id while the entry lasts)."""

    pod_limits: Mapping[str, int]
    sources: Mapping[str, str] | None
    config: LimitAwareConfig
    verdict: Response
    told: str | None  # the message after the pod's subject; None: the message names no pod


class UnboundVerdicts:
    """unbound_verdict, remembered per pod shape until the node table changes.

    The pods of a workload created between two changes of the node table ask one question: a
    scale-up on a full cluster (the case this check exists for) sends the same limits and
    placement, only the name differs, and the answer differs only in naming it. The shape is the
    placement's key and the pod's limits and sources as pod_amounts' memo hands them out (one
    mapping per shape), with the exemption and the namespace's configuration; the version of the
    node table stands for everything else the verdict reads (sums, bindings held, nodes).
    """

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        # Policy: per pod shape, VERDICTS_KEPT verdicts, 2 MiB with their messages, cleared when the
        # node table's version changes.
        self._kept: Memo[tuple[object, ...], _Kept] = Memo(
            "unbound-verdicts", entries=VERDICTS_KEPT, max_bytes=2 * MiB, cleared=Cleared.ON_VERSION
        )

    def verdict(
        self,
        table: NodeTable,
        subject: str,
        pod_limits: Mapping[str, int],
        placement: Placement,
        record_of: Callable[[str], NodeLike | None],
        allocated_of: Callable[[str], Mapping[str, int]],
        config: LimitAwareConfig,
        *,
        exempt_reason: str | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> Response:
        """unbound_verdict's answer (*exempt_reason*: the pod's exemption, None: not exempt)."""
        if self._kept.version != table.version:
            self._kept.at_version(table.version)
        key = (placement.key, id(pod_limits), id(sources), id(config), exempt_reason)
        kept = self._kept.get(key)
        if kept is not None:
            return kept.verdict if kept.told is None else retold(kept.verdict, subject + kept.told)
        verdict = unbound_verdict(
            table,
            subject,
            pod_limits,
            placement,
            record_of,
            allocated_of,
            config,
            exempt=exempt_reason is not None,
            exempt_reason=exempt_reason or "",
            sources=sources,
        )
        message = verdict.message
        # Kept unless clipped (another name would be clipped elsewhere), naming the pod otherwise
        # than first, or too large to keep.
        if len(message) >= MAX_MESSAGE_LENGTH or (message and not message.startswith(subject)):
            return verdict
        shape = (placement.key, tuple(pod_limits.items()), tuple(sources.items()) if sources else ())
        told = message[len(subject) :] if message else None
        kept = _Kept(pod_limits, sources, config, verdict, told)
        self._kept.put(key, kept, measured=shape, value_bytes=2 * len(message))
        return verdict


def over_ratio_names(table: NodeTable, default_ratios: Mapping[str, int]) -> list[str]:
    """Nodes whose committed limits exceed their limit capacity for some resource (audit's
    node_overages is non-empty), found with one comparison per column."""
    over = np.zeros(table.size, bool)
    for resource in set(table.columns) | set(default_ratios):
        column: Any = table.columns.get(resource)
        found = capacity(table, resource, default_ratios)
        if found is None:  # past int64: the same comparison in Python integers
            exact_rows = ExactTable(table)
            column = exact_rows.columns[resource]
            found = exact_rows.capacity(resource, default_ratios.get(resource))
        if column is not None:
            over |= found.present & (column.committed > found.cap)
    return [table.names[row] for row in np.flatnonzero(over & table.alive).tolist()]


def screened_nodes(state: ClusterState, config: LimitAwareConfig) -> tuple[list[NodeLike], int, int]:
    """The nodes audit must look at, and how many others are within their ratio or have none.

    The node table finds the nodes over their ratio with one comparison per column; the others
    are only counted (a node without any ratio is reported as not checked, never as within it).
    """
    over = over_ratio_names(state.node_table(), config.default_ratios)
    listed = set(over)
    without_ratio = sum(
        1 for node in state.nodes() if node.traits.name not in listed and not effective_ratios(node, config)
    )
    others = state.counts()["nodes"] - len(listed)
    return [state.node(name) for name in over], others - without_ratio, without_ratio
