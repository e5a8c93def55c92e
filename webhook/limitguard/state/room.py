"""Room on one node: what placement hints and preemption ask of the state.

Both read the node's record and its exact sums (what its node-table row mirrors): room per resource
is limit capacity minus allocated limits, bindings the ledger holds included; "does this pod fit
once these pods are gone" takes their share out of the node's sum first, as a binding retried for
a pod already counted there is judged (admission.validating). For every row at once, the node
table's capacities hold the same numbers (NodeTable.capacity(resource, default).free and .present;
state.scan.exact_or_wide_capacity, exact always).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from limitguard.core.config import LimitAwareConfig
from limitguard.core.fit import fits
from limitguard.core.limitaware import effective_ratios
from limitguard.core.ratios import limit_capacity
from limitguard.state.store import ClusterState


def node_room(state: ClusterState, node: str, config: LimitAwareConfig) -> dict[str, int] | None:
    """Per resource *node* checks (its effective ratio map), how much more limit it takes: limit
    capacity minus allocated, held bindings included (negative when over its ratio); a resource
    it does not check has no entry (no bound). None when the node is not in the cache."""
    record = state.node(node)
    if record is None:
        return None
    allocated = state.allocated(node)
    return {
        resource: limit_capacity(record.allocatable.get(resource, 0), percent) - allocated.get(resource, 0)
        for resource, percent in effective_ratios(record, config).items()
    }


def fits_without(
    state: ClusterState,
    node: str,
    pod_limits: Mapping[str, int],
    removed: Iterable[str],
    config: LimitAwareConfig,
) -> bool | None:
    """Whether a pod with *pod_limits* fits *node* once the pods *removed* ("namespace/name") are
    gone: what each adds to the node's sum (its limits when the cache counts it there, else what
    the ledger holds for it there) leaves it first. None when the node is not in the cache."""
    record = state.node(node)
    if record is None:
        return None
    allocated = dict(state.allocated(node))
    for key in dict.fromkeys(removed):
        namespace, _, name = key.partition("/")
        pod = state.pod(namespace, name)
        share = (
            pod.limits
            if pod is not None and pod.counted_node == node
            else state.ledger.holding(key, record.name)
        )
        for resource, amount in share.items():
            allocated[resource] = allocated.get(resource, 0) - amount
    return fits(pod_limits.items(), record.allocatable, allocated, effective_ratios(record, config))
