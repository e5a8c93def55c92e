"""A pod's effective resources per resource name (SPEC 1), parsed once per pod.

Filtering uses the pod's *limit*: per container its limit, else its request, else 0 (Koordinator's
LimitAware rule: a container without a limit is held to its request). Scoring (extender, explain)
also needs requests (request, else the limit that API defaulting copies into it) and both with the
scheduler's non-zero cpu/memory defaults. Every view combines containers by Kubernetes'
effective-resources rule with sidecars (KEP-753), plus the RuntimeClass overhead.

Watch events apply tens of thousands of pods a second, so each container's quantities are parsed
once and the views are cheap dict merges over the parsed amounts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.errors import LimitguardError
from limitguard.core.quantity import to_units

ResourceAmounts = dict[str, int]

# The scheduler's non-zero defaults (k8s.io/kubernetes/pkg/scheduler/util: DefaultMilliCPURequest,
# DefaultMemoryRequest): a container with neither request nor limit for cpu / memory counts this much
# when nodes are *scored*, so piles of best-effort pods do not look free. Filtering never uses them.
NON_ZERO_DEFAULTS: Mapping[str, int] = {"cpu": 100, "memory": 200 * 1024**2}


class PodSpecError(LimitguardError, ValueError):
    """A pod spec whose resources cannot be read (wrong types, unparsable quantities)."""


def _is_object(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # dict first: the ABC check is slow


def _amounts(raw: Any, where: Callable[[], str]) -> ResourceAmounts:
    if not raw:
        return {}
    if not _is_object(raw):
        raise PodSpecError(f"{where()} is not an object")
    parsed: ResourceAmounts = {}
    for resource, quantity in raw.items():
        try:
            parsed[resource] = to_units(resource, quantity)
        except ValueError as error:
            raise PodSpecError(f"{where()}[{resource}]: {error}") from None
    return parsed


# A container as (requests, limits), parsed.
Parsed = tuple[ResourceAmounts, ResourceAmounts]


def _parse_container(container: Any) -> Parsed:
    if not _is_object(container):
        raise PodSpecError("container is not an object")
    resources = container.get("resources")
    if not resources:
        return {}, {}
    name = lambda: f"container {container.get('name')!r}: resources"  # noqa: E731 - only on errors
    if not _is_object(resources):
        raise PodSpecError(f"{name()} is not an object")
    return (
        _amounts(resources.get("requests"), lambda: f"{name()}.requests"),
        _amounts(resources.get("limits"), lambda: f"{name()}.limits"),
    )


@dataclass(frozen=True, slots=True)
class _ParsedPod:
    regular: list[Parsed]
    init: list[tuple[Parsed, bool]]  # (amounts, is a sidecar: restartPolicy Always)
    overhead: ResourceAmounts


def _containers(spec: Mapping[str, Any], field: str) -> list[Any]:
    containers = spec.get(field)
    if not containers:
        return []
    if not isinstance(containers, list):
        raise PodSpecError(f"spec.{field} is not a list")
    return containers


def _parse(spec: Any) -> _ParsedPod:
    if not _is_object(spec):
        raise PodSpecError("pod spec is not an object")
    regular = [_parse_container(container) for container in _containers(spec, "containers")]
    init = [
        (_parse_container(container), container.get("restartPolicy") == "Always")
        for container in _containers(spec, "initContainers")
    ]
    return _ParsedPod(regular, init, _amounts(spec.get("overhead"), lambda: "spec.overhead"))


# -- per-container views --------------------------------------------------------------------------
View = Callable[[Parsed], ResourceAmounts]


def limit_view(parsed: Parsed) -> ResourceAmounts:
    """Its limit, else its request."""
    requests, limits = parsed
    return {**requests, **limits} if requests else dict(limits)


def request_view(parsed: Parsed) -> ResourceAmounts:
    """Its request, else its limit (API defaulting copies a limit into a missing request)."""
    requests, limits = parsed
    return {**limits, **requests} if limits else dict(requests)


def with_non_zero_defaults(view: View) -> View:
    """The view with the scheduler's non-zero cpu/memory defaults; an explicit 0 stays 0."""

    def with_defaults(parsed: Parsed) -> ResourceAmounts:
        values = view(parsed)
        for resource, default in NON_ZERO_DEFAULTS.items():
            values.setdefault(resource, default)
        return values

    return with_defaults


_SCORING_REQUESTS = with_non_zero_defaults(request_view)
_SCORING_LIMITS = with_non_zero_defaults(limit_view)


def _add(total: ResourceAmounts, amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        total[resource] = total.get(resource, 0) + amount


def _maximize(total: ResourceAmounts, amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        if amount > total.get(resource, 0):
            total[resource] = amount


def _effective(pod: _ParsedPod, view: View) -> ResourceAmounts:
    """max(long-running sum incl. sidecars, each init container + the sidecars started before it)
    + overhead; resources that sum to 0 are left out."""
    long_running: ResourceAmounts = {}
    for parsed in pod.regular:
        _add(long_running, view(parsed))
    if pod.init:
        started_sidecars: ResourceAmounts = {}
        init_peak: ResourceAmounts = {}
        for parsed, sidecar in pod.init:
            values = view(parsed)
            if sidecar:
                _add(started_sidecars, values)
                _add(long_running, values)
            else:
                during_init = dict(started_sidecars)
                _add(during_init, values)
                _maximize(init_peak, during_init)
        _maximize(long_running, init_peak)
    _add(long_running, pod.overhead)
    return {resource: amount for resource, amount in long_running.items() if amount}


def pod_limits(spec: Mapping[str, Any]) -> ResourceAmounts:
    """The pod's limit per resource (what filtering and admission count)."""
    return _effective(_parse(spec), limit_view)


def pod_requests(spec: Mapping[str, Any], *, non_zero: bool = False) -> ResourceAmounts:
    """The pod's request per resource; with *non_zero*, as the scheduler scores it."""
    return _effective(_parse(spec), _SCORING_REQUESTS if non_zero else request_view)


def pod_scoring_limits(spec: Mapping[str, Any]) -> ResourceAmounts:
    """`pod_limits` with the non-zero cpu/memory defaults (LimitAware scoring, never filtering)."""
    return _effective(_parse(spec), _SCORING_LIMITS)


@dataclass(frozen=True, slots=True)
class PodAmounts:
    limits: ResourceAmounts
    scoring_requests: ResourceAmounts  # non-zero defaults
    scoring_limits: ResourceAmounts  # non-zero defaults


# Pods come from a handful of templates: the same resources over and over. Amounts are memoised
# by the raw resource fields (bounded; past the bound, new shapes are computed and not kept), and
# the dicts handed out are shared, so callers must never mutate them.
_AMOUNTS: dict[tuple[Any, ...], PodAmounts] = {}
_MAX_AMOUNTS = 4096


def _frozen(amounts: Any) -> tuple[Any, ...] | None:
    if not amounts:
        return ()
    return tuple(amounts.items()) if type(amounts) is dict else None


def _resources_key(spec: Any) -> tuple[Any, ...] | None:
    """A hashable key of everything pod_amounts reads; None for shapes not worth memoising."""
    if type(spec) is not dict:
        return None
    key: list[Any] = [_frozen(spec.get("overhead"))]
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        if containers:
            if type(containers) is not list:
                return None
            for container in containers:
                if type(container) is not dict:
                    return None
                resources = container.get("resources") or {}
                if type(resources) is not dict:
                    return None
                key.append(
                    (
                        container.get("restartPolicy") == "Always",
                        _frozen(resources.get("requests")),
                        _frozen(resources.get("limits")),
                    )
                )
        key.append(field)
    return tuple(key)


def pod_amounts(spec: Mapping[str, Any]) -> PodAmounts:
    """Every view the cluster state keeps for a pod, from one parse of its containers (memoised)."""
    key = _resources_key(spec)
    if key is not None:
        try:
            cached = _AMOUNTS.get(key)
        except TypeError:  # an unhashable quantity (a list, ...): compute, and let _parse reject it
            key, cached = None, None
        if cached is not None:
            return cached
    pod = _parse(spec)
    limits = _effective(pod, limit_view)
    scoring_limits = _effective(pod, _SCORING_LIMITS)
    amounts = PodAmounts(
        limits, _effective(pod, _SCORING_REQUESTS), limits if scoring_limits == limits else scoring_limits
    )
    if key is not None and len(_AMOUNTS) < _MAX_AMOUNTS:
        _AMOUNTS[key] = amounts
    return amounts
