"""The views of a pod's resources that the cluster state, admission, extender and explain use.

One model underneath (`limitguard.core.podresources`, component-helpers' PodRequests/PodLimits plus
limitguard's guard rule); this module only names the views and memoises them. Every view first
applies the apiserver's defaulting (a container's limit fills its missing request), as every pod
the apiserver admits or stores has been through it.

Watch events apply tens of thousands of pods a second and pods come from a handful of templates,
so the views are memoised by the raw resource fields they read (spec and resize status).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.core.podresources import (
    NON_ZERO_DEFAULTS,
    PodSpecError,
    ResourceAmounts,
    guard_limits,
    nonzero,
    parse_pod_resources,
    resize_infeasible,
    scoring_requests,
    upstream_requests,
    with_api_defaults,
)

__all__ = [
    "NON_ZERO_DEFAULTS",
    "PodAmounts",
    "PodSpecError",
    "ResourceAmounts",
    "pod_amounts",
    "pod_limits",
    "pod_requests",
]


def _model(spec: Any, status: Any):
    return with_api_defaults(parse_pod_resources(spec, status))


def pod_limits(spec: Mapping[str, Any], status: Mapping[str, Any] | None = None) -> ResourceAmounts:
    """The pod's limit per resource (what filtering and admission count); zeros left out.

    Memoised with the other views: pods of one workload share their shape. The mapping may be
    shared, so callers must not modify it."""
    return pod_amounts(spec, status).limits


def pod_requests(
    spec: Mapping[str, Any], *, non_zero: bool = False, status: Mapping[str, Any] | None = None
) -> ResourceAmounts:
    """The pod's request per resource; with *non_zero*, as the scheduler scores it."""
    model = _model(spec, status)
    return nonzero(scoring_requests(model) if non_zero else upstream_requests(model))


@dataclass(frozen=True, slots=True)
class PodAmounts:
    limits: ResourceAmounts
    scoring_requests: ResourceAmounts  # non-zero defaults
    scoring_limits: ResourceAmounts  # non-zero defaults


# Bounded; past the bound, new shapes are computed and not kept. The dicts handed out are shared
# between pods, so callers must never mutate them.
_AMOUNTS: dict[tuple[Any, ...], PodAmounts] = {}
_MAX_AMOUNTS = 4096


def _frozen(amounts: Any) -> tuple[Any, ...] | None:
    if not amounts:
        return ()
    if type(amounts) is not dict:
        raise TypeError
    return tuple(amounts.items())


def _status_key(status: Any) -> dict[str, tuple[Any, ...]]:
    """Per container name, the status fields a resize reads (only containers that report them)."""
    found: dict[str, tuple[Any, ...]] = {}
    if type(status) is not dict:
        return found
    for field in ("containerStatuses", "initContainerStatuses"):
        for item in status.get(field) or ():
            resources = item.get("resources") if type(item) is dict else None
            if resources is not None:
                found[item.get("name")] = (
                    _frozen(resources.get("requests")),
                    _frozen(resources.get("limits")),
                    _frozen(item.get("allocatedResources")),
                )
    return found


def _resources_key(spec: Any, status: Any) -> tuple[Any, ...] | None:
    """A hashable key of everything the views read; None for shapes not worth memoising."""
    if type(spec) is not dict:
        return None
    try:
        statuses = _status_key(status)
        pod_level = spec.get("resources")
        key: list[Any] = [
            _frozen(spec.get("overhead")),
            None
            if pod_level is None
            else (_frozen(pod_level.get("requests")), _frozen(pod_level.get("limits"))),
            resize_infeasible(status) if statuses else False,
        ]
        for field in ("containers", "initContainers"):
            for container in spec.get(field) or ():
                resources = container.get("resources") or {}
                key.append(
                    (
                        container.get("restartPolicy") == "Always",
                        _frozen(resources.get("requests")),
                        _frozen(resources.get("limits")),
                        statuses.get(container.get("name")) if statuses else None,
                    )
                )
            key.append(field)
        return tuple(key)
    except (TypeError, AttributeError):  # not dicts and lists all the way down: compute, let the parser judge
        return None


def pod_amounts(spec: Mapping[str, Any], status: Mapping[str, Any] | None = None) -> PodAmounts:
    """Every view the cluster state keeps for a pod, from one parse (memoised)."""
    key = _resources_key(spec, status)
    if key is not None:
        try:
            cached = _AMOUNTS.get(key)
        except TypeError:  # an unhashable quantity (a list, ...): compute, and let the parser reject it
            key, cached = None, None
        if cached is not None:
            return cached
    model = _model(spec, status)
    limits = nonzero(guard_limits(model))
    scoring_limits = nonzero(guard_limits(model, non_zero=True))
    amounts = PodAmounts(
        limits, nonzero(scoring_requests(model)), limits if scoring_limits == limits else scoring_limits
    )
    if key is not None and len(_AMOUNTS) < _MAX_AMOUNTS:
        _AMOUNTS[key] = amounts
    return amounts
