"""Compact records of Nodes, Pods and Namespaces: only what policy needs, parsed once on arrival.

The cache holds up to hundreds of thousands of pods, so a record keeps limits as exact integers
and drops the rest of the object, and shares what pods have in common: names of namespaces, nodes
and controller kinds are interned (one string object however many pods name it), a pod's amounts
come from pod_amounts' memo (one PodAmounts per pod template), and four booleans pack into one int.
Records are never modified once built (an event replaces the record) and the shared parts are
never mutated, so sharing cannot leak between pods.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.core.config import DAEMONSET_KINDS, OwnerKind
from limitguard.core.eligibility import NodeTraits, parse_taints
from limitguard.core.objects import object_or_empty as _map
from limitguard.core.podlimits import PodAmounts, PodRules, PodSpecError, ResourceAmounts, pod_amounts
from limitguard.core.podresources import MIRROR_ANNOTATION
from limitguard.core.podrules import scheduling_group
from limitguard.core.pools import ANNOTATION, DEFAULT, PoolChooser, RatioSource
from limitguard.core.quantity import to_units
from limitguard.core.ratios import RATIO_ANNOTATION, RatioError, RatioMap, parse_ratio_annotation
from limitguard.state.sharing import shared_name, shared_owner, shared_priority

log = logging.getLogger(__name__)

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(slots=True)
class NodeRecord:
    traits: NodeTraits
    allocatable: ResourceAmounts
    # The map that replaces the cluster default: a valid annotation's, else the node's pool's;
    # None means the cluster default applies (in scoring, LimitAwareArgs' default may stand in).
    ratio_override: RatioMap | None
    ratio_problem: str | None  # why the annotation was ignored
    ratio_source: RatioSource = DEFAULT  # annotation, pool:<name> or default: every report names it
    uid: str = ""  # metadata.uid: a policy report names and is owned by its node

    @property
    def name(self) -> str:
        return self.traits.name


_ACTIVE, _TERMINATING, _DAEMONSET, _MIRROR, _GATED = 1, 2, 4, 8, 16
_NO_AMOUNTS = PodAmounts({}, {}, {}, {}, {})


@dataclass(slots=True)
class PodRecord:
    """What the state keeps of a pod. Never modified once built: the state replaces a pod's record
    on each event, and the nominated map holds the same object. Not a frozen dataclass: its
    __init__ (nine fields through object.__setattr__) cost ~15,000 instructions, a fifth of a
    pod's upsert, 2.3 billion at 150,000 pods."""

    key: str  # "namespace/name": the state's dict key, so each pod holds its name once
    namespace: str
    uid: str
    node_name: str
    amounts: PodAmounts  # shared between pods with the same resources (pod_amounts): never mutated
    flags: int  # _ACTIVE | _TERMINATING | _DAEMONSET | _MIRROR | _GATED
    nominated_node: str = ""  # only while unbound: the scheduler's nominator drops bound pods
    controller: OwnerKind | None = None  # (group, kind) of the controller ownerReference
    priority: int = 0  # spec.priority (set by the Priority admission plugin)
    group: str = ""  # spec.schedulingGroup.podGroupName: its PodGroup, bound one member at a time

    @property
    def name(self) -> str:
        return self.key[len(self.namespace) + 1 :]

    @property
    def limits(self) -> ResourceAmounts:
        """Effective limits: resize status included (SPEC 1)."""
        return self.amounts.limits

    # Scoring only (extender, explain): requests and limits with the scheduler's non-zero cpu/memory defaults.
    @property
    def requests(self) -> ResourceAmounts:
        return self.amounts.scoring_requests

    @property
    def scoring_limits(self) -> ResourceAmounts:
        return self.amounts.scoring_limits

    @property
    def active(self) -> bool:
        """Phase is not Succeeded/Failed."""
        return bool(self.flags & _ACTIVE)

    @property
    def terminating(self) -> bool:
        return bool(self.flags & _TERMINATING)

    @property
    def daemonset(self) -> bool:
        """Controlled by an apps DaemonSet."""
        return bool(self.flags & _DAEMONSET)

    @property
    def mirror(self) -> bool:
        return bool(self.flags & _MIRROR)

    @property
    def gated(self) -> bool:
        """spec.schedulingGates is not empty: the scheduler does not try the pod yet."""
        return bool(self.flags & _GATED)

    @property
    def counted_node(self) -> str:
        """The node whose allocated sum this pod adds to ('' when none)."""
        return self.node_name if self.flags & _ACTIVE else ""


@dataclass(slots=True, frozen=True)
class NamespaceRecord:
    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


def node_ratio_override(annotations: Mapping[str, Any]) -> tuple[RatioMap | None, str | None]:
    """The annotation's ratio map, or (None, problem) when it is malformed."""
    text = annotations.get(RATIO_ANNOTATION)
    if text is None:
        return None, None
    if not isinstance(text, str):
        return None, "annotation value is not a string"
    try:
        return parse_ratio_annotation(text), None
    except RatioError as error:
        return None, str(error)


def node_record(node: Mapping[str, Any], pool_of: PoolChooser | None = None) -> NodeRecord:
    """The node's record, its ratio map resolved: annotation, else first matching pool, else default."""
    metadata = _map(node.get("metadata"))
    spec = _map(node.get("spec"))
    name = shared_name(str(metadata.get("name") or ""))
    allocatable: ResourceAmounts = {}
    for resource, quantity in _map(_map(node.get("status")).get("allocatable")).items():
        try:
            allocatable[shared_name(resource)] = to_units(resource, quantity)
        except ValueError as error:
            log.warning("node %s: ignoring allocatable %s: %s", name, resource, error)
    labels = {
        shared_name(str(key)): shared_name(str(value)) for key, value in _map(metadata.get("labels")).items()
    }
    override, problem = node_ratio_override(_map(metadata.get("annotations")))
    source = ANNOTATION
    if override is None:
        pool = pool_of(labels) if pool_of else None
        override, source = (pool.ratios, pool.source) if pool is not None else (None, DEFAULT)
    if problem:
        log.warning(
            "node %s: malformed %s annotation, using the %s ratios: %s",
            name,
            RATIO_ANNOTATION,
            source.describe(),
            problem,
        )
    traits = NodeTraits(name, labels, parse_taints(spec.get("taints")), bool(spec.get("unschedulable")))
    return NodeRecord(traits, allocatable, override, problem, source, str(metadata.get("uid") or ""))


def controller_of(metadata: Mapping[str, Any]) -> OwnerKind | None:
    """(API group, kind) of the pod's controller: the ownerReference with `controller: true`."""
    owners = metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        owner = _map(owner)
        if owner.get("controller") is True:
            api_version = str(owner.get("apiVersion") or "")
            return shared_owner((api_version.rpartition("/")[0], str(owner.get("kind") or "")))
    return None


def is_mirror_pod(metadata: Mapping[str, Any]) -> bool:
    """A static pod's API mirror: the kubelet runs it whatever admission answers."""
    return MIRROR_ANNOTATION in _map(metadata.get("annotations"))


def pod_record(pod: Mapping[str, Any], rules: PodRules) -> PodRecord:
    metadata = _map(pod.get("metadata"))
    spec = _map(pod.get("spec"))
    status = _map(pod.get("status"))
    namespace = shared_name(str(metadata.get("namespace") or ""))
    key = f"{namespace}/{metadata.get('name') or ''}"
    try:
        amounts = pod_amounts(spec, status, rules)  # shared between pods of one template: never mutated
    except PodSpecError as error:
        log.warning("pod %s: limits not counted: %s", key, error)
        amounts = _NO_AMOUNTS
    node_name = str(spec.get("nodeName") or "")
    controller = controller_of(metadata)
    flags = (
        (0 if status.get("phase") in TERMINAL_PHASES else _ACTIVE)
        | (0 if metadata.get("deletionTimestamp") is None else _TERMINATING)
        | (_DAEMONSET if controller in DAEMONSET_KINDS else 0)
        | (_MIRROR if is_mirror_pod(metadata) else 0)
        | (_GATED if spec.get("schedulingGates") else 0)
    )
    return PodRecord(
        key,
        namespace,
        str(metadata.get("uid") or ""),
        shared_name(node_name) if node_name else "",
        amounts,
        flags,
        "" if node_name else shared_name(str(status.get("nominatedNodeName") or "")),
        controller,
        _priority(spec.get("priority")),
        scheduling_group(spec),
    )


def _priority(value: Any) -> int:
    return shared_priority(value) if type(value) is int else 0


def namespace_record(namespace: Mapping[str, Any]) -> NamespaceRecord:
    metadata = _map(namespace.get("metadata"))
    return NamespaceRecord(
        name=shared_name(str(metadata.get("name") or "")),
        labels={str(k): str(v) for k, v in _map(metadata.get("labels")).items()},
        annotations={str(k): str(v) for k, v in _map(metadata.get("annotations")).items()},
    )
