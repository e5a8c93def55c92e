"""An unbound pod's check worked out node by node: the oracle of state.scan.unbound_verdict."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from limitguard.core.config import LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import Placement
from limitguard.core.fit import fits
from limitguard.core.limitaware import NodeLike, effective_ratios, no_room
from limitguard.core.response import Response, allowed


def check_unbound(
    subject: str,
    pod_limits: Mapping[str, int],
    placement: Placement,
    nodes: Iterable[NodeLike],
    allocated_of: Callable[[str], Mapping[str, int]],
    config: LimitAwareConfig,
    *,
    exempt: bool = False,
    exempt_reason: str = "",
    sources: Mapping[str, str] | None = None,
) -> Response:
    """A pod created without a node: is there any eligible node with room for its limits?

    One pass, cheapest test first: eligibility (label and taint lookups) before the fit sums, and
    it stops at the first node that takes the pod; only a "no" visits every node.
    """
    if not pod_limits or config.unbound_pods is UnboundPolicy.IGNORE:
        return allowed("fits")
    eligible = 0
    example: NodeLike | None = None
    used = [(resource, amount) for resource, amount in pod_limits.items() if amount > 0]
    for node in nodes:
        if placement.rejection(node.traits) is not None:
            continue
        eligible += 1
        if fits(used, node.allocatable, allocated_of(node.traits.name), effective_ratios(node, config)):
            return allowed("fits")
        example = example or node
    return no_room(
        subject,
        pod_limits,
        eligible,
        example,
        allocated_of,
        config,
        exempt=exempt,
        exempt_reason=exempt_reason,
        sources=sources,
    )
