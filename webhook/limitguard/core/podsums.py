"""A pod's totals per resource under one release's rules: upstream PodRequests / PodLimits and
limitguard's guard value.

Two resize rules (``PodRules.whole_pod_resize``), from k8s.io/component-helpers ``resource/helpers.go``:

* helpers v0.35/v0.36: each container counts its own max(spec, status), and those are summed, so two
  containers resizing in opposite directions (4->1 and 1->4 cpu) count 4 + 4 = 8;
* helpers v0.37: the pod counts max(sum of spec, sum of actuated, sum of allocated), the init rule
  applied to each sum, so the same pod counts max(5, 5) = 5. Every init container reads its status;
  the pod-level status maps stand in for the sums when pod-level resize is on and they are present.
"""

from __future__ import annotations

from limitguard.core.podresources import (
    NON_ZERO_DEFAULTS,
    Amounts,
    ContainerAmounts,
    ContainerView,
    PodResources,
    ResourceAmounts,
    add_amounts,
    aggregate_containers,
    is_supported_pod_level_resource,
    max_amounts,
)
from limitguard.core.podrules import DEFAULT_RULES, PodRules


# -- per-container values, helpers v0.35/v0.36 (determineEffectiveRequests / Limits) ----------------
def effective_requests(c: ContainerAmounts, infeasible: bool) -> Amounts:
    """max(spec, actual, allocated); only the running values when infeasible."""
    if not c.has_status:
        return c.requests
    if infeasible:
        return max_amounts(c.actual_requests, c.allocated)
    return max_amounts(c.requests, c.actual_requests, c.allocated)


def effective_limits(c: ContainerAmounts, infeasible: bool) -> Amounts:
    """max(spec, actual); only the running limits when infeasible."""
    if not c.has_status:
        return c.limits
    if infeasible:
        return dict(c.actual_limits or {})
    return max_amounts(c.limits, c.actual_limits)


# -- per-container values, helpers v0.37 (containerAllocatedRequests, containerActuated*) ----------
def allocated_requests(c: ContainerAmounts, infeasible: bool) -> Amounts:
    if c.allocated is not None:
        return c.allocated
    return {} if infeasible else c.requests


def actuated_requests(c: ContainerAmounts, infeasible: bool) -> Amounts:
    if c.actual_requests is not None:
        return c.actual_requests
    if c.allocated is not None:
        return c.allocated
    return {} if infeasible else c.requests


def actuated_limits(c: ContainerAmounts, infeasible: bool) -> Amounts:
    if c.actual_limits is not None:
        return c.actual_limits
    return {} if infeasible else c.limits


def _whole_pod(
    pod: PodResources, infeasible: bool, spec: ContainerView, *running: ContainerView
) -> ResourceAmounts:
    """max over the whole pod of each view's aggregate; spec left out when the resize is infeasible."""
    sums = [aggregate_containers(pod.containers, pod.init_containers, view) for view in running]
    if not infeasible:
        sums.append(aggregate_containers(pod.containers, pod.init_containers, spec))
    return max_amounts(*sums)


def _filled(view: ContainerView, non_missing: Amounts | None) -> ContainerView:
    """applyNonMissing: defaults for the names a container's list does not name."""
    if not non_missing:
        return view
    return lambda c: {**{k: v for k, v in non_missing.items() if k not in view(c)}, **view(c)}


def _pod_level(
    pod: PodResources, rules: PodRules, use_status: bool, spec: Amounts, *running: Amounts | None
) -> ResourceAmounts:
    """The pod-level values that replace the container aggregate (supported names only)."""
    values: Amounts = spec
    if rules.pod_level_resize and use_status and pod.status_reported:
        infeasible = pod.resize_infeasible
        if rules.whole_pod_resize:  # effectivePodLevelResources: every name of any list
            values = max_amounts(None if infeasible else spec, *running)
        else:  # v0.35/v0.36: the names of spec, each its effective value (0 when missing)
            effective = max_amounts(*running) if infeasible else max_amounts(spec, *running)
            values = {name: effective.get(name, 0) for name in spec}
    return {name: amount for name, amount in values.items() if is_supported_pod_level_resource(name)}


# -- upstream PodRequests / PodLimits -------------------------------------------------------------
def upstream_requests(
    pod: PodResources,
    *,
    rules: PodRules = DEFAULT_RULES,
    use_status: bool = True,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
    non_missing: Amounts | None = None,
) -> ResourceAmounts:
    """PodRequests(pod, PodResourcesOptions{...}) of the release's component-helpers."""
    infeasible = use_status and pod.resize_infeasible
    spec_view = _filled(lambda c: c.requests, non_missing)
    if not use_status:
        total = aggregate_containers(pod.containers, pod.init_containers, spec_view)
    elif not rules.whole_pod_resize:
        view = _filled(lambda c: effective_requests(c, infeasible), non_missing)
        total = aggregate_containers(pod.containers, pod.init_containers, view)
    elif rules.pod_level_resize and pod.status_allocated is not None and pod.status_requests is not None:
        spec_sum = aggregate_containers(pod.containers, pod.init_containers, spec_view)
        total = max_amounts(None if infeasible else spec_sum, pod.status_requests, pod.status_allocated)
    else:
        total = _whole_pod(
            pod,
            infeasible,
            spec_view,
            _filled(lambda c: actuated_requests(c, infeasible), non_missing),
            _filled(lambda c: allocated_requests(c, infeasible), non_missing),
        )
    if not skip_pod_level and pod.pod_requests:
        running = (pod.status_requests, pod.status_allocated)
        total.update(_pod_level(pod, rules, use_status, pod.pod_requests, *running))
    if not exclude_overhead:
        add_amounts(total, pod.overhead)
    return total


def upstream_limits(
    pod: PodResources,
    *,
    rules: PodRules = DEFAULT_RULES,
    use_status: bool = True,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
) -> ResourceAmounts:
    """PodLimits(pod, PodResourcesOptions{...}) of the release's component-helpers."""
    infeasible = use_status and pod.resize_infeasible
    if not use_status:
        total = aggregate_containers(pod.containers, pod.init_containers, lambda c: c.limits)
    elif not rules.whole_pod_resize:
        total = aggregate_containers(
            pod.containers, pod.init_containers, lambda c: effective_limits(c, infeasible)
        )
    elif rules.pod_level_resize and pod.status_limits is not None:
        spec_sum = aggregate_containers(pod.containers, pod.init_containers, lambda c: c.limits)
        total = max_amounts(None if infeasible else spec_sum, pod.status_limits)
    else:
        total = _whole_pod(pod, infeasible, lambda c: c.limits, lambda c: actuated_limits(c, infeasible))
    if not skip_pod_level and pod.pod_level_set:
        total.update(_pod_level(pod, rules, use_status, pod.pod_limits or {}, pod.status_limits))
    if not exclude_overhead:
        for name, amount in pod.overhead.items():
            if total.get(name):
                total[name] += amount
    return total


# -- limitguard's guard value ---------------------------------------------------------------------
def _with_defaults(view: ContainerView, non_zero: bool) -> ContainerView:
    if not non_zero:
        return view
    return lambda c: {**NON_ZERO_DEFAULTS, **view(c)}


def _container_guard(pod: PodResources, rules: PodRules, non_zero: bool) -> ResourceAmounts:
    """Per container its limit, else its request, combined by the release's resize rule."""
    infeasible = pod.resize_infeasible
    if not rules.whole_pod_resize:
        view = _with_defaults(
            lambda c: {**effective_requests(c, infeasible), **effective_limits(c, infeasible)}, non_zero
        )
        return aggregate_containers(pod.containers, pod.init_containers, view)
    total = _whole_pod(
        pod,
        infeasible,
        _with_defaults(lambda c: {**c.requests, **c.limits}, non_zero),
        _with_defaults(
            lambda c: {**actuated_requests(c, infeasible), **actuated_limits(c, infeasible)}, non_zero
        ),
        _with_defaults(
            lambda c: {**allocated_requests(c, infeasible), **actuated_limits(c, infeasible)}, non_zero
        ),
    )
    if rules.pod_level_resize and pod.status_reported:
        # The pod-level status maps stand in for the sums upstream; never count below either.
        running = {**max_amounts(pod.status_requests, pod.status_allocated), **(pod.status_limits or {})}
        total = max_amounts(total, running)
    return total


def guard_limits(
    pod: PodResources, *, non_zero: bool = False, rules: PodRules = DEFAULT_RULES
) -> ResourceAmounts:
    """What limitguard holds the pod to: per container its limit, else its request (resize status
    included by the release's rule); a pod-level limit replaces the aggregate, a pod-level request
    alone raises it; overhead on non-zero values. *non_zero* applies the scheduler's scoring
    defaults (never for filtering)."""
    total = _container_guard(pod, rules, non_zero)
    if pod.pod_level_set:
        limits = _pod_level(pod, rules, True, pod.pod_limits or {}, pod.status_limits)
        requests = _pod_level(
            pod, rules, True, pod.pod_requests or {}, pod.status_requests, pod.status_allocated
        )
        for name, amount in requests.items():
            if name not in limits:
                total[name] = max(total.get(name, 0), amount)
        total.update(limits)
    for name, amount in pod.overhead.items():
        if total.get(name):
            total[name] += amount
    return total


def scoring_requests(pod: PodResources, rules: PodRules = DEFAULT_RULES) -> ResourceAmounts:
    """Requests as the scheduler scores them: non-zero cpu/memory defaults for containers naming none."""
    return upstream_requests(pod, rules=rules, non_missing=NON_ZERO_DEFAULTS)


def nonzero(amounts: Amounts) -> ResourceAmounts:
    return {name: amount for name, amount in amounts.items() if amount}
