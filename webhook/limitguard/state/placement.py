"""The nodes a placement hint names, from the node table's full fit mask (vector operations).

Eligibility is the unbound-pod check's (state.scan.eligible_rows); where that check stops at the
first node with room, a hint needs every one of them. The policy choices (which operator, the
term, the patch) are limitguard.core.hints'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from limitguard.core.eligibility import Placement
from limitguard.core.hints import Operator, choose_operator
from limitguard.state.columns import exact
from limitguard.state.hostnames import NO_VALUE
from limitguard.state.scan import capacity, eligible_rows
from limitguard.state.table import NodeTable


@dataclass(frozen=True, slots=True)
class HintNodes:
    operator: Operator
    values: list[str]  # hostname label values, sorted
    fit: int  # eligible nodes with room for the pod's limits
    eligible: int
    capped: bool  # In the max_nodes fitting nodes with the most room, not all of them


def hint_nodes(
    table: NodeTable,
    pod_limits: Mapping[str, int],
    placement: Placement,
    default_ratios: Mapping[str, int],
    max_nodes: int,
) -> HintNodes | str:
    """The nodes to name for a pod with *pod_limits*, or why there are none (a metrics reason)."""
    used = [(resource, amount) for resource, amount in pod_limits.items() if amount > 0]
    if not used:
        return "no-limits"
    eligible = eligible_rows(table, placement)
    if eligible.count == 0:
        return "no-eligible-node"
    rows = table.high_water
    eligible_mask = eligible.mask[:rows]
    fit = eligible_mask
    capacities = []
    fits_somewhere = True
    for resource, amount in used:
        found = capacity(table, resource, default_ratios) if exact(amount) else None
        if found is None:
            return "not-exact"  # a value past the table's exact range: no hint rather than a wrong one
        if amount > found.largest_room():
            fits_somewhere = False  # no node has that much room (a full cluster): nothing to scan
        elif fits_somewhere:
            fit = fit & (found.room[:rows] >= amount)  # a new array: the memoised mask stays as it is
        capacities.append((found, amount))
    fitting = int(np.count_nonzero(fit)) if fits_somewhere else 0
    if fitting == 0:
        return "none-fit"
    if fitting == eligible.count:
        return "all-fit"
    codes = table.hostnames.codes[:rows]
    unfit_codes = codes[eligible_mask & ~fit]
    unlabelled_unfit = bool(np.any(unfit_codes == NO_VALUE))
    unfit_codes = unfit_codes[unfit_codes != NO_VALUE]
    named = fit & (codes != NO_VALUE)
    if table.hostnames.shared:
        # A value carried by a node without room is never favoured, whichever node it also names.
        unfit_codes = np.unique(unfit_codes)
        without_room = np.zeros(len(table.hostnames.values) + 1, bool)  # the last entry: NO_VALUE
        without_room[unfit_codes] = True
        named &= ~without_room[codes]
        fit_values = len(np.unique(codes[named]))
    else:
        fit_values = int(np.count_nonzero(named))
    if fit_values == 0:
        return "no-hostname-label"
    operator = choose_operator(fit_values, len(unfit_codes), unlabelled_unfit, max_nodes)
    capped = operator is Operator.IN and fit_values > max_nodes
    if operator is Operator.NOT_IN:
        chosen = unfit_codes
    else:
        named_rows = np.flatnonzero(named)
        if capped:
            named_rows = _most_room(named_rows, capacities, max_nodes)
        chosen = codes[named_rows]
        if table.hostnames.shared:
            chosen = np.unique(chosen)
    values = table.hostnames.values
    return HintNodes(
        operator, sorted([values[code] for code in chosen.tolist()]), fitting, eligible.count, capped
    )


def _most_room(rows: np.ndarray, capacities: list, count: int) -> np.ndarray:
    """The *count* of *rows* with the most room: the smallest fraction of limit capacity left free
    after the pod, over the resources it limits and the node checks (none checked: all room).
    argpartition finds them in one pass (a full sort of 10,000 fitting nodes costs a millisecond);
    the same state always names the same nodes."""
    room = np.full(len(rows), np.inf)
    for found, amount in capacities:
        cap = found.cap[rows]
        checked = found.present[rows] & (cap > 0)
        left = (found.free[rows] - amount) / np.where(checked, cap, 1)
        room = np.minimum(room, np.where(checked, left, np.inf))
    if count >= len(rows):
        return rows
    return rows[np.argpartition(-room, count - 1)[:count]]
