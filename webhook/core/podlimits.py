"""A pod's effective limit per resource (SPEC 1).

container value = limits[R], else requests[R], else 0 (Koordinator's LimitAware rule: a container
without a limit is held to its request). The pod value follows Kubernetes' effective-resources rule
with sidecars (KEP-753), plus the RuntimeClass overhead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from webhook.core.quantity import to_units

ResourceAmounts = dict[str, int]


class PodSpecError(ValueError):
    """A pod spec whose resources cannot be read (wrong types, unparsable quantities)."""


def container_values(container: Any) -> ResourceAmounts:
    """Per-resource value of one container: its limit, else its request."""
    if not isinstance(container, Mapping):
        raise PodSpecError("container is not an object")
    resources = container.get("resources") or {}
    if not isinstance(resources, Mapping):
        raise PodSpecError(f"container {container.get('name')!r}: resources is not an object")
    values: ResourceAmounts = {}
    for field in ("requests", "limits"):  # limits last, so they win over requests
        amounts = resources.get(field) or {}
        if not isinstance(amounts, Mapping):
            raise PodSpecError(f"container {container.get('name')!r}: resources.{field} is not an object")
        for resource, quantity in amounts.items():
            try:
                values[resource] = to_units(resource, quantity)
            except ValueError as error:
                raise PodSpecError(
                    f"container {container.get('name')!r}: resources.{field}[{resource}]: {error}"
                ) from None
    return values


def _add(total: ResourceAmounts, amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        total[resource] = total.get(resource, 0) + amount


def _maximize(total: ResourceAmounts, amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        if amount > total.get(resource, 0):
            total[resource] = amount


def _containers(spec: Mapping[str, Any], field: str) -> Iterable[Any]:
    containers = spec.get(field) or []
    if not isinstance(containers, list):
        raise PodSpecError(f"spec.{field} is not a list")
    return containers


def pod_limits(spec: Mapping[str, Any]) -> ResourceAmounts:
    """The pod's limit per resource; resources that sum to 0 are left out."""
    if not isinstance(spec, Mapping):
        raise PodSpecError("pod spec is not an object")
    long_running: ResourceAmounts = {}
    for container in _containers(spec, "containers"):
        _add(long_running, container_values(container))

    started_sidecars: ResourceAmounts = {}
    init_peak: ResourceAmounts = {}
    for container in _containers(spec, "initContainers"):
        values = container_values(container)
        if container.get("restartPolicy") == "Always":
            _add(started_sidecars, values)
            _add(long_running, values)
        else:
            during_init = dict(started_sidecars)
            _add(during_init, values)
            _maximize(init_peak, during_init)

    limits = long_running
    _maximize(limits, init_peak)
    overhead = spec.get("overhead") or {}
    if not isinstance(overhead, Mapping):
        raise PodSpecError("spec.overhead is not an object")
    try:
        _add(limits, {resource: to_units(resource, q) for resource, q in overhead.items()})
    except ValueError as error:
        raise PodSpecError(f"spec.overhead: {error}") from None
    return {resource: amount for resource, amount in limits.items() if amount}
