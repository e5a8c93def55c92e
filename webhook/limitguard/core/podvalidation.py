"""The apiserver's pod resource rules that a mutation could break, as a pure checker.

The mutating webhook must never turn a valid pod into one the apiserver rejects; its tests apply
every patch and run these rules. They are the resource parts of pkg/apis/core/validation
(ValidateResourceRequirements per container, validatePodResources / validatePodResourceConsistency
for pod-level resources), evaluated after API defaulting as the apiserver does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limitguard.core.podresources import (
    HUGEPAGES_PREFIX,
    PodResources,
    PodSpecError,
    aggregate_containers,
    is_supported_pod_level_resource,
    parse_pod_resources,
    with_api_defaults,
)
from limitguard.core.quantity import format_units


def _requirement_errors(where: str, requests: Mapping[str, int], limits: Mapping[str, int]) -> list[str]:
    errors: list[str] = []
    for name, amount in {**requests, **limits}.items():
        if amount < 0:
            errors.append(f"{where}[{name}]: must be greater than or equal to 0")
    for name, request in requests.items():
        limit = limits.get(name)
        if limit is None:
            continue
        if request > limit:
            errors.append(
                f"{where}.requests[{name}]: {format_units(name, request)} must be less than or equal to "
                f"{name} limit of {format_units(name, limit)}"
            )
        elif name.startswith(HUGEPAGES_PREFIX) and request != limit:
            errors.append(f"{where}.requests[{name}]: must equal the hugepages limit")
    return errors


def consistency_errors(pod: PodResources) -> list[str]:
    """The rule violations of an already-defaulted pod (empty: the apiserver accepts its resources)."""
    errors: list[str] = []
    for field, containers in (("containers", pod.containers), ("initContainers", pod.init_containers)):
        for index, c in enumerate(containers):
            errors += _requirement_errors(f"spec.{field}[{index}].resources", c.requests, c.limits)
    if pod.pod_requests is None and pod.pod_limits is None:
        return errors  # spec.resources absent: no pod-level rules
    pod_requests, pod_limits = pod.pod_requests or {}, pod.pod_limits or {}
    for name in {**pod_requests, **pod_limits}:
        if not is_supported_pod_level_resource(name):
            errors.append(
                f"spec.resources[{name}]: must be a supported pod-level resource (cpu, memory, hugepages-*)"
            )
    errors += _requirement_errors("spec.resources", pod_requests, pod_limits)
    # Every aggregate container request, whatever the resource, within the pod-level request.
    aggregate = aggregate_containers(pod.containers, pod.init_containers, lambda c: c.requests)
    for name, amount in aggregate.items():
        if amount > pod_requests.get(name, 0):
            errors.append(
                f"spec.resources.requests[{name}]: must be greater than or equal to aggregate container "
                f"requests of {format_units(name, amount)}"
            )
    # Every regular container's limit within the pod-level limit of that resource.
    for index, c in enumerate(pod.containers):
        for name, amount in c.limits.items():
            if name in pod_limits and amount > pod_limits[name]:
                errors.append(
                    f"spec.containers[{index}].resources.limits[{name}]: must be less than or equal to "
                    f"pod limits of {format_units(name, pod_limits[name])}"
                )
    return errors


def pod_resource_errors(spec: Mapping[str, Any]) -> list[str]:
    """Defaulting then the resource rules, for a pod spec as a client sends it."""
    try:
        return consistency_errors(with_api_defaults(parse_pod_resources(spec)))
    except PodSpecError as error:
        return [str(error)]
