"""A pod's effective limit per resource (SPEC 1).

container value = limits[R], else requests[R], else 0 (Koordinator's LimitAware rule: a container
without a limit is held to its request). The pod value follows Kubernetes' effective-resources rule
with sidecars (KEP-753), plus the RuntimeClass overhead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
    return _effective(spec, container_values)


def _effective(spec: Mapping[str, Any], value_of: Callable[[Any], ResourceAmounts]) -> ResourceAmounts:
    """Kubernetes' effective-resources rule (KEP-753) over one per-container value function."""
    if not isinstance(spec, Mapping):
        raise PodSpecError("pod spec is not an object")
    long_running: ResourceAmounts = {}
    for container in _containers(spec, "containers"):
        _add(long_running, value_of(container))

    started_sidecars: ResourceAmounts = {}
    init_peak: ResourceAmounts = {}
    for container in _containers(spec, "initContainers"):
        values = value_of(container)
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


# -- scoring-only amounts (SPEC 1, last bullet) -------------------------------------------------
# The scheduler's non-zero defaults (k8s.io/kubernetes/pkg/scheduler/util: DefaultMilliCPURequest,
# DefaultMemoryRequest): a container with neither request nor limit for cpu / memory counts this much
# when nodes are *scored*, so piles of best-effort pods do not look free. Filtering never uses them.
NON_ZERO_DEFAULTS: Mapping[str, int] = {"cpu": 100, "memory": 200 * 1024**2}


def container_requests(container: Any) -> ResourceAmounts:
    """Per-resource request of one container: its request, else its limit (API defaulting copies it)."""
    if not isinstance(container, Mapping):
        raise PodSpecError("container is not an object")
    resources = container.get("resources") or {}
    if not isinstance(resources, Mapping):
        raise PodSpecError(f"container {container.get('name')!r}: resources is not an object")
    values: ResourceAmounts = {}
    for field in ("limits", "requests"):  # requests last, so they win over limits
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


def _non_zero(value_of: Callable[[Any], ResourceAmounts]) -> Callable[[Any], ResourceAmounts]:
    """Wrap a per-container value function with the non-zero defaults; an explicit 0 stays 0."""

    def with_defaults(container: Any) -> ResourceAmounts:
        values = value_of(container)
        for resource, default in NON_ZERO_DEFAULTS.items():
            values.setdefault(resource, default)  # absent means neither request nor limit was set
        return values

    return with_defaults


def pod_requests(spec: Mapping[str, Any], *, non_zero: bool = False) -> ResourceAmounts:
    """The pod's request per resource by the effective-resources rule; zero sums are left out.

    With *non_zero*, cpu and memory use the scheduler's non-zero defaults (scoring only).
    """
    return _effective(spec, _non_zero(container_requests) if non_zero else container_requests)


def pod_scoring_limits(spec: Mapping[str, Any]) -> ResourceAmounts:
    """`pod_limits` with the non-zero defaults for cpu and memory (LimitAware scoring, never filtering)."""
    return _effective(spec, _non_zero(container_values))
