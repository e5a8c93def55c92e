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

from limitguard.core.memo import Memo, MiB
from limitguard.core.podresources import (
    NON_ZERO_DEFAULTS,
    PodSpecError,
    ResourceAmounts,
    parse_pod_resources,
    resize_infeasible,
    with_api_defaults,
)
from limitguard.core.podrules import PodRules
from limitguard.core.podsums import (
    guard_limits,
    nonzero,
    scoring_requests,
    upstream_limits,
    upstream_requests,
)

__all__ = [
    "FROM_LIMIT_AND_REQUEST",
    "FROM_REQUEST",
    "NON_ZERO_DEFAULTS",
    "PodAmounts",
    "PodRules",
    "PodSpecError",
    "ResourceAmounts",
    "pod_amounts",
    "pod_limits",
    "pod_requests",
]


def _model(spec: Any, status: Any):
    return with_api_defaults(parse_pod_resources(spec, status))


def pod_limits(spec: Mapping[str, Any], status: Mapping[str, Any] | None, rules: PodRules) -> ResourceAmounts:
    """The pod's limit per resource (what filtering and admission count); zeros left out.

    Memoised with the other views: pods of one workload share their shape. The mapping may be
    shared, so callers must not modify it. *rules*: the pod rules of the release that applies."""
    return pod_amounts(spec, status, rules).limits


def pod_requests(
    spec: Mapping[str, Any],
    *,
    rules: PodRules,
    non_zero: bool = False,
    status: Mapping[str, Any] | None = None,
) -> ResourceAmounts:
    """The pod's request per resource; with *non_zero*, as the scheduler scores it (memoised with
    the other views: the mapping may be shared, so callers must not modify it)."""
    amounts = pod_amounts(spec, status, rules)
    return amounts.scoring_requests if non_zero else amounts.requests


# Where a counted value comes from, when not from the pod's limits alone (a message says so).
FROM_REQUEST = "request"  # no container sets a limit for the resource: its request is counted
FROM_LIMIT_AND_REQUEST = "limit-and-request"  # some containers set one; the others' requests count
_FROM_LIMITS: Mapping[str, str] = {}  # shared: never mutated, like the other views


@dataclass(frozen=True, slots=True)
class PodAmounts:
    limits: ResourceAmounts
    requests: ResourceAmounts  # PodRequests, zeros left out
    scoring_requests: ResourceAmounts  # non-zero defaults
    scoring_limits: ResourceAmounts  # non-zero defaults
    # resource -> FROM_REQUEST or FROM_LIMIT_AND_REQUEST, for the resources whose limit counts requests
    sources: Mapping[str, str]


def _sources(model: Any, rules: PodRules, limits: ResourceAmounts) -> Mapping[str, str]:
    """The resources whose counted value is more than the pod's declared limits (PodLimits): requests
    stand in for the limits that are not set."""
    declared = upstream_limits(model, rules=rules)
    found = {
        name: FROM_REQUEST if declared.get(name, 0) <= 0 else FROM_LIMIT_AND_REQUEST
        for name, amount in limits.items()
        if declared.get(name, 0) < amount
    }
    return found or _FROM_LIMITS


# The dicts handed out are shared between pods, so callers must never mutate them.
# Policy: per resources shape (release included), 4,096 shapes, 4 MiB, never cleared (bounded only).
_AMOUNTS: Memo[tuple[Any, ...], PodAmounts] = Memo("pod-amounts", entries=4096, max_bytes=4 * MiB)


def _frozen(amounts: Any) -> tuple[Any, ...] | None:
    if not amounts:
        return ()
    if type(amounts) is not dict:
        raise TypeError
    return tuple(amounts.items())


def _optional_frozen(amounts: Any) -> tuple[Any, ...] | None:
    """Like _frozen, keeping absent (None) apart from empty: the resize rules tell them apart."""
    return None if amounts is None else ("set", _frozen(amounts))


def _resources_status(item: dict) -> tuple[Any, ...] | None:
    resources = item.get("resources")
    allocated = item.get("allocatedResources")
    if resources is None and allocated is None:
        return None
    return (
        resources is not None,
        _optional_frozen(resources.get("requests")) if resources is not None else None,
        _optional_frozen(resources.get("limits")) if resources is not None else None,
        _optional_frozen(allocated),
    )


def _status_key(status: Any) -> dict[str | None, tuple[Any, ...]]:
    """Per container name (None: the pod), the status fields a resize reads (only those reported)."""
    found: dict[str | None, tuple[Any, ...]] = {}
    if type(status) is not dict:
        return found
    pod_level = _resources_status(status)
    if pod_level is not None:
        found[None] = pod_level
    for field in ("containerStatuses", "initContainerStatuses"):
        for item in status.get(field) or ():
            if type(item) is not dict:
                continue
            fields = _resources_status(item)
            if fields is not None and item.get("name") not in found:
                found[item.get("name")] = fields
    return found


def resources_key(spec: Any, status: Any, rules: PodRules) -> tuple[Any, ...] | None:
    """A hashable key of everything the views read; None for shapes not worth memoising."""
    if type(spec) is not dict:
        return None
    try:
        statuses = _status_key(status)
        pod_level = spec.get("resources")
        key: list[Any] = [
            rules.minor,
            statuses.get(None) if statuses else None,  # the pod-level status
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


def pod_amounts(spec: Mapping[str, Any], status: Mapping[str, Any] | None, rules: PodRules) -> PodAmounts:
    """Every view the cluster state keeps for a pod, from one parse (memoised), under *rules*: those
    of the release that applies, handed down by whoever resolved it (the state keeps them)."""
    key = resources_key(spec, status, rules)
    if key is not None:
        try:
            cached = _AMOUNTS.get(key)
        except TypeError:  # an unhashable quantity (a list, ...): compute, and let the parser reject it
            key, cached = None, None
        if cached is not None:
            return cached
    model = _model(spec, status)
    limits = nonzero(guard_limits(model, rules=rules))
    scoring_limits = nonzero(guard_limits(model, non_zero=True, rules=rules))
    amounts = PodAmounts(
        limits,
        nonzero(upstream_requests(model, rules=rules)),
        nonzero(scoring_requests(model, rules)),
        limits if scoring_limits == limits else scoring_limits,
        _sources(model, rules, limits),
    )
    if key is not None:
        _AMOUNTS.put(key, amounts)
    return amounts
