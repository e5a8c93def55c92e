"""The one model of a pod's resources: what Kubernetes 1.35 counts, per resource name (SPEC 1).

Follows k8s.io/component-helpers `resource/helpers.go` at v0.35.7 (the Kubernetes 1.35 line):

* containers combine by the sidecar rule (KEP-753): max(regular + sidecars, each init container +
  the sidecars started before it);
* pod-level `spec.resources` (KEP-2837) replace the container aggregate for cpu, memory and
  `hugepages-*` (`IsSupportedPodLevelResource`);
* in-place resize (UseStatusResources): a container with `status.*ContainerStatuses[].resources`
  counts max(spec, actual, allocated) for requests and max(spec, actual) for limits; when the pod's
  `PodResizePending` condition says `Infeasible`, only the running values count. Init containers
  take status into account only when they are sidecars;
* overhead is added to every request and to every non-zero limit.

`upstream_requests` / `upstream_limits` are those functions, unchanged, for the translated upstream
tests. limitguard's own *guard* value (`guard_limits`) adds one rule of Koordinator's LimitAware
design on top: a container without a limit is held to its request; likewise a pod-level request
stands in for a missing pod-level limit (never below what the containers add up to).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.core.objects import is_object
from limitguard.core.quantity import to_units
from limitguard.core.text import clip
from limitguard.errors import LimitguardError

ResourceAmounts = dict[str, int]
Amounts = Mapping[str, int]

# The scheduler's non-zero defaults (pkg/scheduler/util DefaultMilliCPURequest, DefaultMemoryRequest).
NON_ZERO_DEFAULTS: Mapping[str, int] = {"cpu": 100, "memory": 200 * 1024**2}
HUGEPAGES_PREFIX = "hugepages-"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


class PodSpecError(LimitguardError, ValueError):
    """A pod whose resources cannot be read (wrong types, unparsable quantities)."""


def is_supported_pod_level_resource(name: str) -> bool:
    return name in ("cpu", "memory") or name.startswith(HUGEPAGES_PREFIX)


def parse_amounts(raw: Any, where: Callable[[], str]) -> ResourceAmounts:
    """A ResourceList as exact integers (millicores for cpu)."""
    if not raw:
        return {}
    if not is_object(raw):
        raise PodSpecError(f"{where()} is not an object")
    parsed: ResourceAmounts = {}
    for resource, quantity in raw.items():
        try:
            parsed[resource] = to_units(resource, quantity)
        except ValueError as error:
            raise PodSpecError(f"{where()}[{clip(str(resource))}]: {error}") from None
    return parsed


@dataclass(frozen=True, slots=True)
class ContainerAmounts:
    name: str
    requests: Amounts
    limits: Amounts
    sidecar: bool = False  # an init container with restartPolicy Always
    # From the container's status; None when the kubelet reports no `resources` for it.
    actual_requests: Amounts | None = None
    actual_limits: Amounts | None = None
    allocated: Amounts | None = None

    @property
    def has_status(self) -> bool:
        return self.actual_requests is not None


@dataclass(frozen=True, slots=True)
class PodResources:
    containers: tuple[ContainerAmounts, ...]
    init_containers: tuple[ContainerAmounts, ...]
    overhead: Amounts
    pod_requests: Amounts | None  # spec.resources.requests; None when spec.resources is absent
    pod_limits: Amounts | None
    resize_infeasible: bool = False

    @property
    def pod_level_set(self) -> bool:
        """IsPodLevelResourcesSet: a supported resource named in spec.resources."""
        names = [*(self.pod_requests or {}), *(self.pod_limits or {})]
        return any(is_supported_pod_level_resource(name) for name in names)


def _container_list(spec: Mapping[str, Any], field: str) -> list[Any]:
    containers = spec.get(field)
    if not containers:
        return []
    if not isinstance(containers, list):
        raise PodSpecError(f"spec.{field} is not a list")
    return containers


def _resource_pair(resources: Any, where: str) -> tuple[ResourceAmounts, ResourceAmounts]:
    if not resources:
        return {}, {}
    if not is_object(resources):
        raise PodSpecError(f"{where} is not an object")
    return (
        parse_amounts(resources.get("requests"), lambda: f"{where}.requests"),
        parse_amounts(resources.get("limits"), lambda: f"{where}.limits"),
    )


def _statuses(status: Any) -> dict[str, Mapping[str, Any]]:
    if not is_object(status):
        return {}
    found: dict[str, Mapping[str, Any]] = {}
    for field in ("containerStatuses", "initContainerStatuses"):
        items = status.get(field)
        if isinstance(items, list):
            for item in items:
                if is_object(item) and isinstance(item.get("name"), str):
                    found[item["name"]] = item
    return found


def resize_infeasible(status: Any) -> bool:
    """IsPodResizeInfeasible: the PodResizePending condition has reason Infeasible."""
    conditions = status.get("conditions") if is_object(status) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if is_object(condition) and condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Infeasible"
    return False


def _container(raw: Any, statuses: Mapping[str, Mapping[str, Any]], init: bool) -> ContainerAmounts:
    if not is_object(raw):
        raise PodSpecError("container is not an object")
    name = raw.get("name")
    where = f"container {name!r}: resources"
    requests, limits = _resource_pair(raw.get("resources"), where)
    sidecar = init and raw.get("restartPolicy") == "Always"
    status = statuses.get(name) if isinstance(name, str) and (sidecar or not init) else None
    if status is None or status.get("resources") is None:  # upstream: cs.Resources == nil
        return ContainerAmounts(str(name or ""), requests, limits, sidecar)
    actual_requests, actual_limits = _resource_pair(status["resources"], f"status of {where}")
    allocated = parse_amounts(status.get("allocatedResources"), lambda: f"status of {where}.allocated")
    return ContainerAmounts(str(name), requests, limits, sidecar, actual_requests, actual_limits, allocated)


def parse_pod_resources(spec: Any, status: Any = None) -> PodResources:
    """Read every resource field of a pod spec (and its status, for resizes) once."""
    if not is_object(spec):
        raise PodSpecError("pod spec is not an object")
    statuses = _statuses(status)
    pod_level = spec.get("resources")
    pod_requests = pod_limits = None
    if pod_level is not None:
        pod_requests, pod_limits = _resource_pair(pod_level, "spec.resources")
    return PodResources(
        tuple(_container(c, statuses, False) for c in _container_list(spec, "containers")),
        tuple(_container(c, statuses, True) for c in _container_list(spec, "initContainers")),
        parse_amounts(spec.get("overhead"), lambda: "spec.overhead"),
        pod_requests,
        pod_limits,
        resize_infeasible(status),
    )


# -- API defaulting (pkg/apis/core/v1/defaults.go), which every stored pod has been through -------
def with_api_defaults(pod: PodResources) -> PodResources:
    """SetDefaults_Pod: a container's limit fills its missing request; then a pod-level limit
    without a request defaults the pod-level request (to the containers' aggregate request when
    they name one, except for hugepages, else to the limit)."""

    def defaulted(c: ContainerAmounts) -> ContainerAmounts:
        if not c.limits or c.limits.keys() <= c.requests.keys():
            return c
        return ContainerAmounts(
            c.name,
            {**c.limits, **c.requests},
            c.limits,
            c.sidecar,
            c.actual_requests,
            c.actual_limits,
            c.allocated,
        )

    containers = tuple(map(defaulted, pod.containers))
    init_containers = tuple(map(defaulted, pod.init_containers))
    pod_requests = pod.pod_requests
    if pod.pod_limits:
        pod_requests = dict(pod_requests or {})
        aggregate = aggregate_containers(containers, init_containers, lambda c: c.requests)
        for name, amount in aggregate.items():
            overcommittable = is_supported_pod_level_resource(name) and not name.startswith(HUGEPAGES_PREFIX)
            if overcommittable and name not in pod_requests:
                pod_requests[name] = amount
        for name, amount in pod.pod_limits.items():
            if name not in pod_requests and is_supported_pod_level_resource(name):
                pod_requests[name] = amount
    return PodResources(
        containers, init_containers, pod.overhead, pod_requests, pod.pod_limits, pod.resize_infeasible
    )


# -- per-container values -----------------------------------------------------------------------
ContainerView = Callable[[ContainerAmounts], Amounts]


def _max(*lists: Amounts | None) -> ResourceAmounts:
    result: ResourceAmounts = {}
    for amounts in lists:
        for name, amount in (amounts or {}).items():
            if name not in result or amount > result[name]:
                result[name] = amount
    return result


def effective_requests(c: ContainerAmounts, infeasible: bool) -> Amounts:
    """determineEffectiveRequests: max(spec, actual, allocated); only the running values when infeasible."""
    if not c.has_status:
        return c.requests
    if infeasible:
        return _max(c.actual_requests, c.allocated)
    return _max(c.requests, c.actual_requests, c.allocated)


def effective_limits(c: ContainerAmounts, infeasible: bool) -> Amounts:
    """determineEffectiveLimits: max(spec, actual); only the running limits when infeasible."""
    if not c.has_status:
        return c.limits
    if infeasible:
        return dict(c.actual_limits or {})
    return _max(c.limits, c.actual_limits)


def _add(total: ResourceAmounts, amounts: Amounts) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def aggregate_containers(
    containers: tuple[ContainerAmounts, ...],
    init_containers: tuple[ContainerAmounts, ...],
    view: ContainerView,
) -> ResourceAmounts:
    """max(long-running sum incl. sidecars, each init container + the sidecars started before it)."""
    total: ResourceAmounts = {}
    for c in containers:
        _add(total, view(c))
    started_sidecars: ResourceAmounts = {}
    init_peak: ResourceAmounts = {}
    for c in init_containers:
        values = view(c)
        if c.sidecar:
            _add(total, values)
            _add(started_sidecars, values)
            during = started_sidecars
        else:
            during = dict(values)
            _add(during, started_sidecars)
        init_peak = _max(init_peak, during)
    return _max(total, init_peak)


# -- upstream PodRequests / PodLimits -------------------------------------------------------------
def upstream_requests(
    pod: PodResources,
    *,
    use_status: bool = True,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
    non_missing: Amounts | None = None,
) -> ResourceAmounts:
    """PodRequests(pod, PodResourcesOptions{...}) of component-helpers v0.35.7."""
    infeasible = use_status and pod.resize_infeasible

    def view(c: ContainerAmounts) -> Amounts:
        values = effective_requests(c, infeasible) if use_status else c.requests
        if non_missing:
            values = {**{k: v for k, v in non_missing.items() if k not in values}, **values}
        return values

    total = aggregate_containers(pod.containers, pod.init_containers, view)
    if not skip_pod_level and pod.pod_requests:
        for name, amount in pod.pod_requests.items():
            if is_supported_pod_level_resource(name):
                total[name] = amount
    if not exclude_overhead:
        _add(total, pod.overhead)
    return total


def upstream_limits(
    pod: PodResources,
    *,
    use_status: bool = True,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
) -> ResourceAmounts:
    """PodLimits(pod, PodResourcesOptions{...}) of component-helpers v0.35.7."""
    infeasible = use_status and pod.resize_infeasible
    view = (lambda c: effective_limits(c, infeasible)) if use_status else (lambda c: c.limits)
    total = aggregate_containers(pod.containers, pod.init_containers, view)
    if not skip_pod_level and pod.pod_level_set:
        for name, amount in (pod.pod_limits or {}).items():
            if is_supported_pod_level_resource(name):
                total[name] = amount
    if not exclude_overhead:
        for name, amount in pod.overhead.items():
            if total.get(name):
                total[name] += amount
    return total


# -- limitguard's guard value ---------------------------------------------------------------------
def _guard_view(infeasible: bool, non_zero: bool) -> ContainerView:
    def view(c: ContainerAmounts) -> Amounts:
        values = {**effective_requests(c, infeasible), **effective_limits(c, infeasible)}
        if non_zero:
            for name, default in NON_ZERO_DEFAULTS.items():
                values.setdefault(name, default)
        return values

    return view


def guard_limits(pod: PodResources, *, non_zero: bool = False) -> ResourceAmounts:
    """What limitguard holds the pod to: per container its limit, else its request (resize status
    included); a pod-level limit replaces the aggregate, a pod-level request alone raises it; overhead
    on non-zero values. *non_zero* applies the scheduler's scoring defaults (never for filtering)."""
    total = aggregate_containers(
        pod.containers, pod.init_containers, _guard_view(pod.resize_infeasible, non_zero)
    )
    if pod.pod_level_set:
        limits = pod.pod_limits or {}
        for name, amount in (pod.pod_requests or {}).items():
            if is_supported_pod_level_resource(name) and name not in limits:
                total[name] = max(total.get(name, 0), amount)
        for name, amount in limits.items():
            if is_supported_pod_level_resource(name):
                total[name] = amount
    for name, amount in pod.overhead.items():
        if total.get(name):
            total[name] += amount
    return total


def scoring_requests(pod: PodResources) -> ResourceAmounts:
    """Requests as the scheduler scores them: non-zero cpu/memory defaults for containers naming none."""
    return upstream_requests(pod, non_missing=NON_ZERO_DEFAULTS)


def nonzero(amounts: Amounts) -> ResourceAmounts:
    return {name: amount for name, amount in amounts.items() if amount}
