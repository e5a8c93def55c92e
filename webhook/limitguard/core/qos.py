"""A pod's QoS class as the apiserver computes it (k8s.io/kubernetes pkg/apis/core/helper/qos
ComputePodQOS with PodLevelResources on).

Only cpu and memory count, and only quantities above zero: an explicit "0" is the same as unset.
Which pods the pod-level values alone decide depends on the release (``PodRules``): from 1.37
(PodLevelResourcesFixKubeletQOSClass on) those whose spec.resources names a supported pod-level
resource; before, every pod with a spec.resources object, so `resources: {}` or `{requests: {}}`
hid the containers' values and made the pod BestEffort.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.podresources import PodSpecError, is_supported_pod_level_resource, parse_amounts
from limitguard.core.podrules import DEFAULT_RULES, PodRules

QOS_RESOURCES = ("cpu", "memory")


class QOSClass(enum.StrEnum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _positive(raw: Any, where: str) -> dict[str, int]:
    amounts = parse_amounts(raw, lambda: where)
    return {name: amount for name, amount in amounts.items() if name in QOS_RESOURCES and amount > 0}


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def pod_level_qos_set(spec: Mapping[str, Any], rules: PodRules = DEFAULT_RULES) -> bool:
    """Whether the pod-level values alone decide the class."""
    resources = spec.get("resources")
    if not is_object(resources):
        return False
    if not rules.qos_needs_pod_level_resource:
        return True
    names = [*(resources.get("requests") or {}), *(resources.get("limits") or {})]
    return any(is_supported_pod_level_resource(name) for name in names)


def compute_pod_qos(spec: Mapping[str, Any], rules: PodRules = DEFAULT_RULES) -> QOSClass:
    """ComputePodQOS over a pod spec under a release's rules; raises PodSpecError for unreadable
    resources."""
    if not is_object(spec):
        raise PodSpecError("pod spec is not an object")
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    if pod_level_qos_set(spec, rules):
        resources = spec["resources"]
        _add(requests, _positive(resources.get("requests"), "spec.resources.requests"))
        if resources.get("limits"):
            pod_limits = _positive(resources.get("limits"), "spec.resources.limits")
            _add(limits, pod_limits)
            guaranteed = set(QOS_RESOURCES) <= pod_limits.keys()
    else:
        for field in ("containers", "initContainers"):  # ephemeral containers take no resources
            containers = spec.get(field) or []
            if not isinstance(containers, list):
                raise PodSpecError(f"spec.{field} is not a list")
            for container in containers:
                resources = object_or_empty(container.get("resources") if is_object(container) else None)
                _add(requests, _positive(resources.get("requests"), "container requests"))
                container_limits = _positive(resources.get("limits"), "container limits")
                _add(limits, container_limits)
                if not set(QOS_RESOURCES) <= container_limits.keys():
                    guaranteed = False
    if not requests and not limits:
        return QOSClass.BEST_EFFORT
    matching = all(limits.get(name) == amount for name, amount in requests.items())
    if guaranteed and matching and len(requests) == len(limits):
        return QOSClass.GUARANTEED
    return QOSClass.BURSTABLE
