"""Limit-aware admission decisions (SPEC 2-3): plain functions over plain data.

Callers look nodes, pods and sums up in the cluster state and hand them in; nothing here reads
state or the clock, so every rule is testable with literals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from limitguard.core.config import Enforcement, LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import NodeTraits
from limitguard.core.fit import LimitRow, describe_node, fits, shortfalls
from limitguard.core.memo import Memo, MiB
from limitguard.core.pools import RatioSource
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.core.response import Response, allowed, enforce, warned


class NodeLike(Protocol):
    """What policy reads of a node (cluster.records.NodeRecord is one)."""

    traits: NodeTraits
    allocatable: Mapping[str, int]
    ratio_override: Mapping[str, int] | None  # the annotation's or the pool's map; None: the default
    ratio_problem: str | None
    ratio_source: RatioSource


def effective_ratios(node: NodeLike, config: LimitAwareConfig) -> Mapping[str, int]:
    """The valid annotation's map, else the node's pool's (resolved into its record), else the
    default: one level replaces the others, nothing is merged."""
    return node.ratio_override if node.ratio_override is not None else config.default_ratios


def ratio_warnings(node: NodeLike) -> tuple[str, ...]:
    if node.ratio_problem is None:
        return ()
    used = node.ratio_source.describe()
    return (f"node {node.traits.name}: malformed {RATIO_ANNOTATION}, {used} ratios used",)


def node_shortfalls(
    pod_limits: Mapping[str, int],
    node: NodeLike,
    allocated: Mapping[str, int],
    config: LimitAwareConfig,
    sources: Mapping[str, str] | None = None,
) -> list[LimitRow]:
    return shortfalls(
        pod_limits,
        node.allocatable,
        allocated,
        effective_ratios(node, config),
        sources,
        node.ratio_source.describe(),
    )


def _brief(node: str, found: list[LimitRow]) -> str:
    return f"limitguard: node {node} over limit ratio: " + ", ".join(row.brief() for row in found)


def check_on_node(
    subject: str,
    pod_limits: Mapping[str, int],
    node: NodeLike,
    allocated: Mapping[str, int],
    config: LimitAwareConfig,
    *,
    exempt: bool = False,
    exempt_reason: str = "",
    sources: Mapping[str, str] | None = None,
) -> Response:
    """A pod about to run on *node* (a binding, or a create with spec.nodeName); *sources* (the pod's
    PodAmounts.sources) let the denial say which limits are requests."""
    if fits(pod_limits.items(), node.allocatable, allocated, effective_ratios(node, config)):
        return allowed("fits", *ratio_warnings(node))  # the usual answer: no rows built
    warnings = ratio_warnings(node)
    if exempt:
        return allowed(exempt_reason or "exempt-daemonset", *warnings)
    found = node_shortfalls(pod_limits, node, allocated, config, sources)  # not empty: fits() said so
    message = (
        f"{subject} does not fit the limit-to-allocatable ratio of {describe_node(node.traits.name, found)}"
    )
    return enforce("exceeds", message, _brief(node.traits.name, found), config.enforcement, *warnings)


def grown_limits(old_limits: Mapping[str, int], new_limits: Mapping[str, int]) -> dict[str, int]:
    """The resources whose limit a resize raises, with their new limits (empty: nothing grows)."""
    return {
        resource: amount for resource, amount in new_limits.items() if amount > old_limits.get(resource, 0)
    }


def check_resize(
    subject: str,
    old_limits: Mapping[str, int],
    new_limits: Mapping[str, int],
    node: NodeLike,
    allocated: Mapping[str, int],
    config: LimitAwareConfig,
    *,
    exempt: bool = False,
    counted: Mapping[str, int] | None = None,
    sources: Mapping[str, str] | None = None,
) -> Response:
    """An in-place resize: the pod's own count leaves the node's sum, the new limits must fit.

    Only resources whose limit grows over *old_limits* are checked, so lowering a limit always
    passes, even on a node that is already over its ratio. *counted* is what *allocated* holds for
    the pod (the cache's count and ledger holds); by default its old limits.
    """
    grown = grown_limits(old_limits, new_limits)
    if not grown:
        return allowed("lowered", *ratio_warnings(node))
    own = old_limits if counted is None else counted
    without_pod = {resource: allocated.get(resource, 0) - own.get(resource, 0) for resource in grown}
    return check_on_node(subject, grown, node, without_pod, config, exempt=exempt, sources=sources)


# Policy: per (example node, its sums, the pod's limits), 256 texts, 2 MiB, never cleared (bounded
# only): the key holds every number the texts show, so a kept text is never stale.
NO_ROOM_TEXTS: Memo[tuple[object, ...], tuple[str, str]] = Memo(
    "no-room-texts", entries=256, max_bytes=2 * MiB
)


def _no_room_texts(
    eligible: int,
    node: str,
    pod_limits: tuple[tuple[str, int], ...],
    allocatable: tuple[tuple[str, int], ...],
    allocated: tuple[tuple[str, int], ...],
    ratios: tuple[tuple[str, int], ...],
    sources: tuple[tuple[str, str], ...],
    ratio_source: str,
) -> tuple[str, str]:
    """The message after the pod's name, with the example node's shortfall, and the warning.
    Remembered: while nothing lands on the example node, every pod of a shape that fits nowhere
    gets the same texts, and building them (a row and five formatted quantities per resource)
    costs more than the scan that found no room."""
    found = shortfalls(
        dict(pod_limits), dict(allocatable), dict(allocated), dict(ratios), dict(sources), ratio_source
    )
    message = (
        f" fits no eligible node's limit-to-allocatable ratio ({eligible} eligible"
        f" node{'s' if eligible != 1 else ''} checked); for example {describe_node(node, found)}"
    )
    return message, f"limitguard: none of {eligible} eligible nodes has room for the pod's limits"


def no_room(
    subject: str,
    pod_limits: Mapping[str, int],
    eligible: int,
    example: NodeLike | None,
    allocated_of: Callable[[str], Mapping[str, int]],
    config: LimitAwareConfig,
    *,
    exempt: bool = False,
    exempt_reason: str = "",
    sources: Mapping[str, str] | None = None,
) -> Response:
    """The verdict when none of *eligible* nodes takes the pod; *example* is the first of them."""
    if exempt:
        return allowed(exempt_reason or "exempt-daemonset")
    if example is None:
        # Not a limits question: the scheduler (or a cluster autoscaler) decides what happens next.
        return allowed("no-eligible-node")
    texts = (
        eligible,
        example.traits.name,
        tuple(pod_limits.items()),
        tuple(example.allocatable.items()),
        tuple(allocated_of(example.traits.name).items()),
        tuple(effective_ratios(example, config).items()),
        tuple(sources.items()) if sources else (),
        example.ratio_source.describe(),
    )
    found = NO_ROOM_TEXTS.get(texts)
    if found is None:
        found = _no_room_texts(*texts)
        # a pod of thousands of resources: its texts are built again, not kept
        NO_ROOM_TEXTS.put(texts, found, value_bytes=len(found[0]) + len(found[1]))
    after_subject, brief = found
    message = subject + after_subject
    if config.unbound_pods is UnboundPolicy.WARN and config.enforcement is not Enforcement.DRY_RUN:
        return warned("no-room", message, brief)
    # DryRun shows nothing, whatever unboundPods says: the finding is logged and counted only.
    return enforce("no-room", message, brief, config.enforcement)
