"""The component-helpers cases added at v0.37, and the pod rules of each release side by side.

Source: kubernetes/component-helpers `resource/helpers_test.go` at tag v0.37.0-beta.0 (the newest
readable 1.37 tag): the cases it adds to TestPodResourceRequests, TestPodResourceLimits and
TestAggregateContainerRequestsAndLimits, and the TestPodRequestsAndLimitsVerticalScalingWrappers
table, written out again in Python. v0.36.3 adds only TestPodResourceRequestsWithDRANodeAllocatableClaims
(DRA claims in requests, not limits) to v0.35.7's tables. Rules of `resource/helpers.go` at
v0.35.7, v0.36.3 and v0.37.0-beta.0; the release table is `limitguard.core.podrules`.
AggregateContainer* are PodRequests/PodLimits without pod-level values and overhead.
"""

from __future__ import annotations

from typing import Any

import pytest

from limitguard.core.podlimits import pod_limits
from limitguard.core.podresources import parse_pod_resources
from limitguard.core.podrules import RULES
from limitguard.core.podsums import upstream_limits, upstream_requests
from tests.unit.core.upstream_pods import INFEASIBLE, cpu, units

V35, V36, V37 = RULES[35], RULES[36], RULES[37]


def container(name: str, req: str | None = None, lim: str | None = None, **extra: Any) -> dict:
    resources: dict[str, Any] = {}
    if req is not None:
        resources["requests"] = cpu(req)
    if lim is not None:
        resources["limits"] = cpu(lim)
    return {"name": name, "resources": resources, **extra}


def cstatus(name: str, req: str | None = None, lim: str | None = None, allocated: str | None = None) -> dict:
    body: dict[str, Any] = {"name": name}
    if req is not None or lim is not None:
        body["resources"] = container(name, req, lim)["resources"]
    if allocated is not None:
        body["allocatedResources"] = cpu(allocated)
    return body


def pod_body(containers=(), init=(), pod_level=None, statuses=(), init_statuses=(), **status: Any):
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": list(init)}
    if pod_level is not None:
        spec["resources"] = pod_level
    return spec, {"containerStatuses": list(statuses), "initContainerStatuses": list(init_statuses), **status}


def model(*args: Any, **kwargs: Any):
    return parse_pod_resources(*pod_body(*args, **kwargs))


# -- TestPodResourceRequests / TestPodResourceLimits: "... resolves max of sums instead of sum of maxes"
def test_aggregate_request_resolves_max_of_sums():
    pod = model(
        [container("c1", req="1"), container("c2", req="2")],
        statuses=[cstatus("c1", allocated="2"), cstatus("c2", allocated="1")],
    )
    assert upstream_requests(pod, rules=V37) == units(cpu("3"))


def test_aggregate_limit_resolves_max_of_sums():
    pod = model(
        [container("c1", lim="1"), container("c2", lim="2")],
        statuses=[cstatus("c1", lim="2"), cstatus("c2", lim="1")],
    )
    assert upstream_limits(pod, rules=V37) == units(cpu("3"))
    # v0.36.3: each container's max(spec, status), summed.
    assert upstream_limits(pod, rules=V36) == units(cpu("4"))


# -- TestAggregateContainerRequestsAndLimits (v0.37 additions) --------------------------------------
AGGREGATE_CASES = [
    # (name, pod, expected requests, expected limits)
    (
        "aggregate container request resolves max of sums instead of sum of maxes",
        model(
            [container("c1", req="1"), container("c2", req="2")],
            statuses=[cstatus("c1", allocated="2"), cstatus("c2", allocated="1")],
        ),
        cpu("3"),
        {},
    ),
    (
        "aggregate container limit resolves max of sums instead of sum of maxes",
        model(
            [container("c1", lim="1"), container("c2", lim="2")],
            statuses=[cstatus("c1", lim="2"), cstatus("c2", lim="1")],
        ),
        {},
        cpu("3"),
    ),
    (
        "aggregate container request/limit resolves directly from pod status when PLR vertical scaling enabled",
        model(
            [container("c1", req="1", lim="2")],
            allocatedResources=cpu("4"),
            resources={"requests": cpu("3"), "limits": cpu("5")},
        ),
        cpu("4"),
        cpu("5"),
    ),
    (
        "falls back to container status aggregation when PLR vertical scaling enabled but podAllocatedResources is nil",
        model(
            [container("c1", req="1", lim="2")],
            statuses=[cstatus("c1", req="5", lim="7", allocated="6")],
            resources={"requests": cpu("3"), "limits": cpu("7")},
        ),
        cpu("6"),
        cpu("7"),
    ),
    (
        "falls back to container status aggregation when PLR vertical scaling enabled but podResources is nil",
        model(
            [container("c1", req="1", lim="2")],
            statuses=[cstatus("c1", req="5", lim="8", allocated="6")],
            allocatedResources=cpu("6"),
        ),
        cpu("6"),
        cpu("8"),
    ),
]


@pytest.mark.parametrize(("case", "pod", "requests", "limits"), AGGREGATE_CASES)
def test_aggregate_container_requests_and_limits_v037(case, pod, requests, limits):
    options = {"rules": V37, "exclude_overhead": True, "skip_pod_level": True}
    assert upstream_requests(pod, **options) == units(requests), case
    assert upstream_limits(pod, **options) == units(limits), case


# -- TestPodRequestsAndLimitsVerticalScalingWrappers -------------------------------------------------
WRAPPER_CASES = [
    # (name, pod, non-missing requests, expected requests, expected limits)
    (
        "pod level requests/limits with PLR vertical scaling enabled and status populated",
        model(
            [container("c1", req="1", lim="2")],
            pod_level={"requests": cpu("2"), "limits": cpu("4")},
            allocatedResources=cpu("3"),
            resources={"requests": cpu("3.5"), "limits": cpu("5")},
        ),
        None,
        cpu("3.5"),
        cpu("5"),
    ),
    (
        "pod level requests/limits with PLR vertical scaling enabled and infeasible resize",
        model(
            [container("c1", req="1", lim="2")],
            pod_level={"requests": cpu("10"), "limits": cpu("20")},
            conditions=INFEASIBLE,
            allocatedResources=cpu("3"),
            resources={"requests": cpu("4"), "limits": cpu("8")},
        ),
        None,
        cpu("4"),
        cpu("8"),
    ),
    (
        "container limits aggregation with infeasible resize",
        model([container("c1", lim="10")], statuses=[cstatus("c1", lim="6")], conditions=INFEASIBLE),
        None,
        {},
        cpu("6"),
    ),
    (
        "non missing container requests applied to init container",
        model(init=[container("i1", req="1")]),
        {"memory": "100Mi"},
        {"cpu": "1", "memory": "100Mi"},
        {},
    ),
    (
        "non missing container requests applied to regular container",
        model([container("c1", req="1")]),
        {"memory": "100Mi"},
        {"cpu": "1", "memory": "100Mi"},
        {},
    ),
]


@pytest.mark.parametrize(("case", "pod", "non_missing", "requests", "limits"), WRAPPER_CASES)
def test_pod_requests_and_limits_vertical_scaling_wrappers(case, pod, non_missing, requests, limits):
    use_status = non_missing is None  # upstream's non-missing cases leave UseStatusResources off
    missing = units(non_missing) if non_missing else None
    got = upstream_requests(pod, rules=V37, use_status=use_status, non_missing=missing)
    assert got == units(requests), case
    assert upstream_limits(pod, rules=V37, use_status=use_status) == units(limits), case


# -- the release table, both sides of every change ----------------------------------------------------
def counted(minor: int, *args: Any, **kwargs: Any) -> dict[str, int]:
    spec, status = pod_body(*args, **kwargs)
    return dict(pod_limits(spec, status, RULES[minor]))


def test_opposite_resizes_count_the_larger_sum_from_137():
    """Two containers resizing 4->1 and 1->4 cpu: 1.37 counts max(sum spec, sum actuated) = 5,
    earlier releases each container's max, summed: 8."""
    args = ([container("a", lim="1"), container("b", lim="4")],)
    statuses = [cstatus("a", lim="4"), cstatus("b", lim="1")]
    assert counted(37, *args, statuses=statuses) == units(cpu("5"))
    assert counted(36, *args, statuses=statuses) == units(cpu("8"))
    assert counted(35, *args, statuses=statuses) == units(cpu("8"))


def test_pod_level_limit_counts_the_running_value_from_136():
    """A pod-level limit lowered 4->2 while the pod still runs at 4: 1.36 counts 4, 1.35 the spec."""
    kwargs = {"pod_level": {"limits": cpu("2")}, "resources": {"limits": cpu("4")}}
    args = ([container("c", req="1")],)
    assert counted(35, *args, **kwargs) == units(cpu("2"))
    assert counted(36, *args, **kwargs) == units(cpu("4"))
    assert counted(37, *args, **kwargs) == units(cpu("4"))


def test_pod_level_request_counts_the_allocated_value_from_136():
    """A pod-level request alone (no pod-level limit) raises the guard; 1.36 reads allocatedResources."""
    kwargs = {
        "pod_level": {"requests": cpu("1")},
        "resources": {"requests": cpu("1")},
        "allocatedResources": cpu("3"),
    }
    args = ([container("c", req="500m")],)
    assert counted(35, *args, **kwargs) == units(cpu("1"))
    assert counted(36, *args, **kwargs) == units(cpu("3"))


def test_non_sidecar_init_container_reads_its_status_from_137():
    """In-place resize of non-sidecar init containers (GA in 1.37): the init container's running
    limit counts; before 1.37 only sidecars' status was read."""
    args = ([container("app", lim="1")],)
    kwargs = {"init": [container("init", lim="1")], "init_statuses": [cstatus("init", lim="3")]}
    assert counted(36, *args, **kwargs) == units(cpu("1"))
    assert counted(37, *args, **kwargs) == units(cpu("3"))


def test_infeasible_resize_drops_spec_in_every_release():
    args = ([container("c", lim="10")],)
    kwargs = {"statuses": [cstatus("c", lim="6")], "conditions": INFEASIBLE}
    assert counted(35, *args, **kwargs) == counted(37, *args, **kwargs) == units(cpu("6"))


def test_guard_holds_a_container_without_limit_to_its_largest_request_sum():
    """limitguard's limit-else-request rule under the 1.37 sums: requests resizing 2->1 and 1->2."""
    args = ([container("a", req="1"), container("b", req="2")],)
    statuses = [cstatus("a", req="2", allocated="2"), cstatus("b", req="1", allocated="1")]
    assert counted(37, *args, statuses=statuses) == units(cpu("3"))
    assert counted(36, *args, statuses=statuses) == units(cpu("4"))
