"""The one model of a pod's resources: what each Kubernetes release counts, per resource name.

Follows k8s.io/component-helpers `resource/helpers.go`, the rules of each release chosen by a
`PodRules` row (`limitguard.core.podrules`):

* containers combine by the sidecar rule (KEP-753): max(regular + sidecars, each init container +
  the sidecars started before it);
* pod-level `spec.resources` (KEP-2837) replace the container aggregate for cpu, memory and
  `hugepages-*` (`IsSupportedPodLevelResource`); from 1.36 (in-place pod-level resize on) a pod-level
  value counts max(spec, `status.resources`) (requests also `status.allocatedResources`);
* in-place resize (UseStatusResources), helpers v0.35/v0.36: a container with
  `status.*ContainerStatuses[].resources` counts max(spec, actual, allocated) for requests and
  max(spec, actual) for limits, summed container by container; only sidecars among init containers
  read status. Helpers v0.37 (1.37): the whole pod counts max(sum of spec, sum of actuated, sum of
  allocated), the init rule applied to each sum, every init container reading its status, and the
  pod-level status maps standing in for the sums when present;
* when the pod's `PodResizePending` condition says `Infeasible`, spec no longer counts;
* overhead is added to every request and to every non-zero limit.

`upstream_requests` / `upstream_limits` are those functions, unchanged, for the translated upstream
tests. limitguard's own *guard* value (`guard_limits`) adds one rule of Koordinator's LimitAware
design on top: a container without a limit is held to its request; likewise a pod-level request
stands in for a missing pod-level limit (never below what the containers add up to).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
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
    # From the container's status; None where the kubelet reports nothing (Go's nil map).
    actual_requests: Amounts | None = None
    actual_limits: Amounts | None = None
    allocated: Amounts | None = None
    init: bool = False
    reported: bool = False  # the status carries `resources` (Go: cs.Resources != nil)

    @property
    def has_status(self) -> bool:
        """Helpers v0.35/v0.36 read status for regular containers and sidecars that report resources."""
        return self.reported and (self.sidecar or not self.init)


@dataclass(frozen=True, slots=True)
class PodResources:
    containers: tuple[ContainerAmounts, ...]
    init_containers: tuple[ContainerAmounts, ...]
    overhead: Amounts
    pod_requests: Amounts | None  # spec.resources.requests; None when spec.resources is absent
    pod_limits: Amounts | None
    resize_infeasible: bool = False
    # Pod-level status (in-place pod-level resize): status.resources and status.allocatedResources.
    status_reported: bool = False
    status_requests: Amounts | None = None
    status_limits: Amounts | None = None
    status_allocated: Amounts | None = None

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


def _optional(raw: Any, where: Callable[[], str]) -> ResourceAmounts | None:
    """A ResourceList that may be absent: None then, as Go's nil map (an empty one is {})."""
    return None if raw is None else parse_amounts(raw, where)


def _status_resources(status: Mapping[str, Any], where: str) -> tuple[bool, Amounts | None, Amounts | None]:
    """(resources reported, their requests, their limits) of a container or pod status."""
    resources = status.get("resources")
    if resources is None:
        return False, None, None
    if not is_object(resources):
        raise PodSpecError(f"{where} is not an object")
    return (
        True,
        _optional(resources.get("requests"), lambda: f"{where}.requests"),
        _optional(resources.get("limits"), lambda: f"{where}.limits"),
    )


def _statuses(status: Any) -> dict[str, Mapping[str, Any]]:
    """Container statuses by name; the first of a name wins (findContainerStatus)."""
    if not is_object(status):
        return {}
    found: dict[str, Mapping[str, Any]] = {}
    for field in ("containerStatuses", "initContainerStatuses"):
        items = status.get(field)
        if isinstance(items, list):
            for item in items:
                if is_object(item) and isinstance(item.get("name"), str):
                    found.setdefault(item["name"], item)
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
    status = statuses.get(name) if isinstance(name, str) else None
    if status is None:
        return ContainerAmounts(str(name or ""), requests, limits, sidecar, init=init)
    reported, actual_requests, actual_limits = _status_resources(status, f"status of {where}")
    allocated = _optional(status.get("allocatedResources"), lambda: f"status of {where}.allocated")
    return ContainerAmounts(
        str(name), requests, limits, sidecar, actual_requests, actual_limits, allocated, init, reported
    )


def parse_pod_resources(spec: Any, status: Any = None) -> PodResources:
    """Read every resource field of a pod spec (and its status, for resizes) once."""
    if not is_object(spec):
        raise PodSpecError("pod spec is not an object")
    statuses = _statuses(status)
    pod_level = spec.get("resources")
    pod_requests = pod_limits = None
    if pod_level is not None:
        pod_requests, pod_limits = _resource_pair(pod_level, "spec.resources")
    pod_status = status if is_object(status) else {}
    reported, status_requests, status_limits = _status_resources(pod_status, "status.resources")
    return PodResources(
        tuple(_container(c, statuses, False) for c in _container_list(spec, "containers")),
        tuple(_container(c, statuses, True) for c in _container_list(spec, "initContainers")),
        parse_amounts(spec.get("overhead"), lambda: "spec.overhead"),
        pod_requests,
        pod_limits,
        resize_infeasible(status),
        reported,
        status_requests,
        status_limits,
        _optional(pod_status.get("allocatedResources"), lambda: "status.allocatedResources"),
    )


# -- API defaulting (pkg/apis/core/v1/defaults.go), which every stored pod has been through -------
def with_api_defaults(pod: PodResources) -> PodResources:
    """SetDefaults_Pod: a container's limit fills its missing request; then a pod-level limit
    without a request defaults the pod-level request (to the containers' aggregate request when
    they name one, except for hugepages, else to the limit)."""

    def defaulted(c: ContainerAmounts) -> ContainerAmounts:
        if not c.limits or c.limits.keys() <= c.requests.keys():
            return c
        return replace(c, requests={**c.limits, **c.requests})

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
    return replace(pod, containers=containers, init_containers=init_containers, pod_requests=pod_requests)


# -- sums -----------------------------------------------------------------------------------------
ContainerView = Callable[[ContainerAmounts], Amounts]


def max_amounts(*lists: Amounts | None) -> ResourceAmounts:
    result: ResourceAmounts = {}
    for amounts in lists:
        for name, amount in (amounts or {}).items():
            if name not in result or amount > result[name]:
                result[name] = amount
    return result


def add_amounts(total: ResourceAmounts, amounts: Amounts) -> None:
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
        add_amounts(total, view(c))
    started_sidecars: ResourceAmounts = {}
    init_peak: ResourceAmounts = {}
    for c in init_containers:
        values = view(c)
        if c.sidecar:
            add_amounts(total, values)
            add_amounts(started_sidecars, values)
            during = started_sidecars
        else:
            during = dict(values)
            add_amounts(during, started_sidecars)
        init_peak = max_amounts(init_peak, during)
    return max_amounts(total, init_peak)
