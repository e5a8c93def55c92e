"""Compact records of Nodes, Pods and Namespaces: only what policy needs, parsed once on arrival.

The cache holds up to hundreds of thousands of pods, so a record keeps limits as exact integers
and drops the rest of the object.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.config import DAEMONSET_KINDS, OwnerKind
from limitguard.core.eligibility import NodeTraits, parse_taints
from limitguard.core.objects import object_or_empty as _map
from limitguard.core.podlimits import PodSpecError, ResourceAmounts, pod_amounts
from limitguard.core.podresources import MIRROR_ANNOTATION
from limitguard.core.quantity import to_units
from limitguard.core.ratios import RATIO_ANNOTATION, RatioError, RatioMap, parse_ratio_annotation

log = logging.getLogger(__name__)

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(slots=True)
class NodeRecord:
    traits: NodeTraits
    allocatable: ResourceAmounts
    ratio_override: RatioMap | None  # from a valid annotation; None means the cluster default applies
    ratio_problem: str | None  # why the annotation was ignored

    @property
    def name(self) -> str:
        return self.traits.name


@dataclass(slots=True, frozen=True)
class PodRecord:
    namespace: str
    name: str
    uid: str
    node_name: str
    limits: ResourceAmounts  # effective: resize status included (SPEC 1)
    daemonset: bool  # controlled by an apps DaemonSet
    active: bool  # phase is not Succeeded/Failed
    terminating: bool
    nominated_node: str  # only while unbound: the scheduler's nominator drops bound pods
    # Scoring only (extender, explain): requests and limits with the scheduler's non-zero cpu/memory
    # defaults. Shared between pods with the same resources (pod_amounts), so 150,000 pods stay lean.
    requests: ResourceAmounts = field(default_factory=dict)
    scoring_limits: ResourceAmounts = field(default_factory=dict)
    controller: OwnerKind | None = None  # (group, kind) of the controller ownerReference
    mirror: bool = False
    priority: int = 0  # spec.priority (set by the Priority admission plugin)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def counted_node(self) -> str:
        """The node whose allocated sum this pod adds to ('' when none)."""
        return self.node_name if self.active else ""


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


def node_record(node: Mapping[str, Any]) -> NodeRecord:
    metadata = _map(node.get("metadata"))
    spec = _map(node.get("spec"))
    name = str(metadata.get("name") or "")
    allocatable: ResourceAmounts = {}
    for resource, quantity in _map(_map(node.get("status")).get("allocatable")).items():
        try:
            allocatable[resource] = to_units(resource, quantity)
        except ValueError as error:
            log.warning("node %s: ignoring allocatable %s: %s", name, resource, error)
    override, problem = node_ratio_override(_map(metadata.get("annotations")))
    if problem:
        log.warning(
            "node %s: malformed %s annotation, using the cluster default: %s", name, RATIO_ANNOTATION, problem
        )
    labels = {str(key): str(value) for key, value in _map(metadata.get("labels")).items()}
    traits = NodeTraits(name, labels, parse_taints(spec.get("taints")), bool(spec.get("unschedulable")))
    return NodeRecord(traits, allocatable, override, problem)


def controller_of(metadata: Mapping[str, Any]) -> OwnerKind | None:
    """(API group, kind) of the pod's controller: the ownerReference with `controller: true`."""
    owners = metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        owner = _map(owner)
        if owner.get("controller") is True:
            api_version = str(owner.get("apiVersion") or "")
            return (api_version.rpartition("/")[0], str(owner.get("kind") or ""))
    return None


def is_daemonset_pod(metadata: Mapping[str, Any], kinds: frozenset[OwnerKind] = DAEMONSET_KINDS) -> bool:
    """Controlled by a DaemonSet (or a configured DaemonSet-like kind), as `kubectl drain` decides:
    only a controller reference counts, not any owner of that kind."""
    return controller_of(metadata) in kinds


def is_mirror_pod(metadata: Mapping[str, Any]) -> bool:
    """A static pod's API mirror: the kubelet runs it whatever admission answers."""
    return MIRROR_ANNOTATION in _map(metadata.get("annotations"))


def pod_record(pod: Mapping[str, Any]) -> PodRecord:
    metadata = _map(pod.get("metadata"))
    spec = _map(pod.get("spec"))
    status = _map(pod.get("status"))
    namespace = str(metadata.get("namespace") or "")
    name = str(metadata.get("name") or "")
    try:
        amounts = pod_amounts(spec, status)  # shared between pods of one template: never mutated
        limits, requests, scoring_limits = amounts.limits, amounts.scoring_requests, amounts.scoring_limits
    except PodSpecError as error:
        log.warning("pod %s/%s: limits not counted: %s", namespace, name, error)
        limits, requests, scoring_limits = {}, {}, {}
    node_name = str(spec.get("nodeName") or "")
    controller = controller_of(metadata)
    return PodRecord(
        namespace=namespace,
        name=name,
        uid=str(metadata.get("uid") or ""),
        node_name=node_name,
        limits=limits,
        daemonset=controller in DAEMONSET_KINDS,
        active=status.get("phase") not in TERMINAL_PHASES,
        terminating=metadata.get("deletionTimestamp") is not None,
        nominated_node="" if node_name else str(status.get("nominatedNodeName") or ""),
        requests=requests,
        scoring_limits=scoring_limits,
        controller=controller,
        mirror=is_mirror_pod(metadata),
        priority=_priority(spec.get("priority")),
    )


def _priority(value: Any) -> int:
    return value if type(value) is int else 0


def namespace_record(namespace: Mapping[str, Any]) -> NamespaceRecord:
    metadata = _map(namespace.get("metadata"))
    return NamespaceRecord(
        name=str(metadata.get("name") or ""),
        labels={str(k): str(v) for k, v in _map(metadata.get("labels")).items()},
        annotations={str(k): str(v) for k, v in _map(metadata.get("annotations")).items()},
    )
