"""Upstream's own test tables for PodRequests / PodLimits, translated case by case.

Source: kubernetes/component-helpers `resource/helpers_test.go` at tag v0.35.7 (Kubernetes 1.35),
commit e2af1bd7bef973f14494f15bbea1eaa216cff15c: TestPodRequestsAndLimits,
TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests, TestPodResourceLimits,
TestPodLevelResourceRequests and TestAggregateContainerRequestsAndLimits. The cases (names, inputs,
expected lists) are written out again here in Python; the functions under test are
`limitguard.core.podresources.upstream_requests` / `upstream_limits` (the upstream rules, without
limitguard's limit-else-request rule) with the same options. Quantities are compared as exact
units (millicores for cpu, bytes otherwise).
"""

from __future__ import annotations

from typing import Any

import pytest

from limitguard.core.podresources import parse_pod_resources, upstream_limits, upstream_requests
from limitguard.core.quantity import to_units

ALWAYS = "Always"
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def units(resources: dict[str, str]) -> dict[str, int]:
    return {name: to_units(name, value) for name, value in resources.items()}


def ctr(name: str = "", req: dict | None = None, lim: dict | None = None, sidecar: bool = False) -> dict:
    body: dict[str, Any] = {"name": name, "resources": {}}
    if req is not None:
        body["resources"]["requests"] = req
    if lim is not None:
        body["resources"]["limits"] = lim
    if sidecar:
        body["restartPolicy"] = ALWAYS
    return body


def status(
    name: str, req: dict | None = None, lim: dict | None = None, allocated: dict | None = None
) -> dict:
    body: dict[str, Any] = {"name": name, "resources": {}}
    if req is not None:
        body["resources"]["requests"] = req
    if lim is not None:
        body["resources"]["limits"] = lim
    if allocated is not None:
        body["allocatedResources"] = allocated
    return body


def pod(
    containers=(),
    init=(),
    overhead=None,
    statuses=(),
    init_statuses=(),
    conditions=(),
    pod_level: dict | None = None,
):
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": list(init)}
    if overhead:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = pod_level
    st = {
        "containerStatuses": list(statuses),
        "initContainerStatuses": list(init_statuses),
        "conditions": list(conditions),
    }
    return parse_pod_resources(spec, st)


# -- TestPodRequestsAndLimits: getPod puts the same resources on a container and an init container --
def get_pod(cpu_req="", cpu_lim="", mem_req="", mem_lim="", cpu_overhead="", mem_overhead=""):
    req = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    overhead = {k: v for k, v in (("cpu", cpu_overhead), ("memory", mem_overhead)) if v}
    return pod([ctr("foo", req, lim)], [ctr("init-foo", req, lim)], overhead)


@pytest.mark.parametrize(
    ("case", "model", "requests", "limits"),
    [
        ("just-limit-no-overhead", get_pod(cpu_lim="9"), {}, {"cpu": "9"}),
        ("just-overhead", get_pod(cpu_overhead="5", mem_overhead="5"), {"cpu": "5", "memory": "5"}, {}),
        (
            "req-and-overhead",
            get_pod(cpu_req="1", mem_req="10", cpu_overhead="5", mem_overhead="5"),
            {"cpu": "6", "memory": "15"},
            {},
        ),
        (
            "all-req-lim-and-overhead",
            get_pod("1", "2", "10", "12", "5", "5"),
            {"cpu": "6", "memory": "15"},
            {"cpu": "7", "memory": "17"},
        ),
        (
            "req-some-lim-and-overhead",
            get_pod(cpu_req="1", cpu_lim="2", mem_req="10", cpu_overhead="5", mem_overhead="5"),
            {"cpu": "6", "memory": "15"},
            {"cpu": "7"},
        ),
    ],
)
def test_pod_requests_and_limits(case, model, requests, limits):
    assert upstream_requests(model) == units(requests), case
    assert upstream_limits(model) == units(limits), case


# -- TestPodRequestsAndLimitsWithoutOverhead ------------------------------------------------------
TWO = [
    ctr("foobar", {"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}),
    ctr("foobar2", {"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"}),
]


@pytest.mark.parametrize(
    ("case", "model", "requests", "limits"),
    [
        ("two container no overhead", pod(TWO), {"cpu": "5", "memory": "17"}, {"cpu": "10", "memory": "34"}),
        (
            "two container with overhead - overhead excluded",
            pod(TWO, overhead={"cpu": "3", "memory": "8"}),
            {"cpu": "5", "memory": "17"},
            {"cpu": "10", "memory": "34"},
        ),
        (
            "massive init - just the largest init",
            pod(
                TWO,
                [
                    ctr("small-init", {"cpu": "1", "memory": "5"}, {"cpu": "1", "memory": "5"}),
                    ctr("big-init", {"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"}),
                ],
                overhead={"cpu": "3", "memory": "8"},
            ),
            {"cpu": "40", "memory": "120"},
            {"cpu": "80", "memory": "240"},
        ),
    ],
)
def test_pod_requests_and_limits_without_overhead(case, model, requests, limits):
    assert upstream_requests(model, exclude_overhead=True) == units(requests), case
    assert upstream_limits(model, exclude_overhead=True) == units(limits), case


# -- TestPodResourceRequests ----------------------------------------------------------------------
def cpu(value: str) -> dict[str, str]:
    return {"cpu": value}


RESTARTABLE_CHAIN = [
    ctr("init-1", cpu("5")),
    ctr("restartable-init-1", cpu("1"), sidecar=True),
    ctr("restartable-init-2", cpu("2"), sidecar=True),
]
REQUEST_CASES = [
    # (description, pod, use_status, exclude_overhead, expected)
    (
        "nil options, larger init container",
        pod([ctr(req=cpu("1"))], [ctr(req=cpu("4"))]),
        False,
        False,
        cpu("4"),
    ),
    (
        "nil options, larger containers",
        pod([ctr(req=cpu("2")), ctr(req=cpu("3"))], [ctr(req=cpu("2"))]),
        False,
        False,
        cpu("5"),
    ),
    (
        "pod overhead excluded",
        pod([ctr(req=cpu("2")), ctr(req=cpu("3"))], [ctr(req=cpu("2"))], overhead=cpu("1")),
        False,
        True,
        cpu("5"),
    ),
    (
        "pod overhead included",
        pod(
            [ctr(req=cpu("2")), ctr(req=cpu("3"))],
            [ctr(req=cpu("2"), lim=cpu("2"))],
            overhead={"cpu": "1", "memory": "1Gi"},
        ),
        False,
        False,
        {"cpu": "6", "memory": "1Gi"},
    ),
    (
        "resized, infeasible",
        pod(
            [ctr("container-1", cpu("4"))], statuses=[status("container-1", cpu("2"))], conditions=INFEASIBLE
        ),
        True,
        False,
        cpu("2"),
    ),
    (
        "resized, infeasible & in-progress",
        pod(
            [ctr("container-1", cpu("6"))],
            statuses=[status("container-1", cpu("2"), allocated=cpu("4"))],
            conditions=INFEASIBLE,
        ),
        True,
        False,
        cpu("4"),
    ),
    (
        "resized, no resize status",
        pod([ctr("container-1", cpu("4"))], statuses=[status("container-1", cpu("2"))]),
        True,
        False,
        cpu("4"),
    ),
    (
        "resized: per-resource 3-way maximum",
        pod(
            [ctr("container-1", {"cpu": "30m", "memory": "20M", "ephemeral-storage": "10G"})],
            statuses=[
                status(
                    "container-1",
                    {"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"},
                    allocated={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                )
            ],
        ),
        True,
        False,
        {"cpu": "30m", "memory": "30M", "ephemeral-storage": "30G"},
    ),
    (
        "resized, infeasible, but don't use status",
        pod(
            [ctr("container-1", cpu("4"))], statuses=[status("container-1", cpu("2"))], conditions=INFEASIBLE
        ),
        False,
        False,
        cpu("4"),
    ),
    (
        "resized, restartable init container, infeasible",
        pod(
            init=[ctr("restartable-init-1", cpu("4"), sidecar=True)],
            init_statuses=[status("restartable-init-1", cpu("2"))],
            conditions=INFEASIBLE,
        ),
        True,
        False,
        cpu("2"),
    ),
    (
        "resized, restartable init container, no resize status",
        pod(
            init=[ctr("restartable-init-1", cpu("4"), sidecar=True)],
            init_statuses=[status("restartable-init-1", cpu("2"))],
        ),
        True,
        False,
        cpu("4"),
    ),
    (
        "resized, restartable init container, infeasible, but don't use status",
        pod(
            init=[ctr("restartable-init-1", cpu("4"), sidecar=True)],
            init_statuses=[status("restartable-init-1", cpu("2"))],
            conditions=INFEASIBLE,
        ),
        False,
        False,
        cpu("4"),
    ),
    (
        "restartable init container",
        pod([ctr("container-1", cpu("1"))], [ctr("restartable-init-1", cpu("1"), sidecar=True)]),
        False,
        False,
        cpu("2"),
    ),
    (
        "multiple restartable init containers",  # max(5, (3+2+1) + 1) = 7
        pod(
            [ctr("container-1", cpu("1"))],
            [*RESTARTABLE_CHAIN, ctr("restartable-init-3", cpu("3"), sidecar=True)],
        ),
        False,
        False,
        cpu("7"),
    ),
    (
        "multiple restartable and regular init containers",  # init-2: 5 + sidecars started before (1+2)
        pod(
            [ctr("container-1", cpu("1"))],
            [*RESTARTABLE_CHAIN, ctr("init-2", cpu("5")), ctr("restartable-init-3", cpu("3"), sidecar=True)],
        ),
        False,
        False,
        cpu("8"),
    ),
    (
        "restartable-init, init and regular",
        pod(
            [ctr("container-1", cpu("100"))],
            [ctr("restartable-init-1", cpu("10"), sidecar=True), ctr("init-1", cpu("200"))],
        ),
        False,
        False,
        cpu("210"),
    ),
]


@pytest.mark.parametrize(("case", "model", "use_status", "exclude_overhead", "expected"), REQUEST_CASES)
def test_pod_resource_requests(case, model, use_status, exclude_overhead, expected):
    assert upstream_requests(model, use_status=use_status, exclude_overhead=exclude_overhead) == units(
        expected
    )


# -- TestPodResourceLimits ------------------------------------------------------------------------
def mem(value: str) -> dict[str, str]:
    return {"memory": value}


LIMIT_CASES = [
    (
        "nil options, larger init container",
        pod([ctr(lim=cpu("1"))], [ctr(lim=cpu("4"))]),
        False,
        False,
        cpu("4"),
    ),
    (
        "nil options, larger containers",
        pod([ctr(lim=cpu("2")), ctr(lim=cpu("3"))], [ctr(lim=cpu("2"))]),
        False,
        False,
        cpu("5"),
    ),
    (
        "pod overhead excluded",
        pod([ctr(lim=cpu("2")), ctr(lim=cpu("3"))], [ctr(lim=cpu("2"))], overhead=cpu("1")),
        False,
        True,
        cpu("5"),
    ),
    (
        "pod overhead included (only on non-zero limits: no memory limit)",
        pod(
            [ctr(lim=cpu("2")), ctr(lim=cpu("3"))],
            [ctr(lim=cpu("2"))],
            overhead={"cpu": "1", "memory": "1Gi"},
        ),
        False,
        False,
        cpu("6"),
    ),
    ("no limited containers should result in no limits for the pod", pod([ctr()]), False, False, {}),
    (
        "one limited and one unlimited container",
        pod([ctr(lim={"cpu": "2", "memory": "2Gi"}), ctr()]),
        False,
        False,
        {"cpu": "2", "memory": "2Gi"},
    ),
    (
        "one limited and one unlimited init container",
        pod([ctr(lim={"cpu": "1", "memory": "1Gi"})], [ctr(lim={"cpu": "2", "memory": "2Gi"}), ctr()]),
        False,
        False,
        {"cpu": "2", "memory": "2Gi"},
    ),
    (
        "restartable init container",
        pod([ctr("container-1", lim=cpu("1"))], [ctr("restartable-init-1", lim=cpu("1"), sidecar=True)]),
        False,
        False,
        cpu("2"),
    ),
    (
        "multiple restartable init containers",
        pod(
            [ctr("container-1", lim=cpu("1"))],
            [
                ctr("init-1", lim=cpu("5")),
                ctr("restartable-init-1", lim=cpu("1"), sidecar=True),
                ctr("restartable-init-2", lim=cpu("2"), sidecar=True),
                ctr("restartable-init-3", lim=cpu("3"), sidecar=True),
            ],
        ),
        False,
        False,
        cpu("7"),
    ),
    (
        "multiple restartable and regular init containers",
        pod(
            [ctr("container-1", lim=cpu("1"))],
            [
                ctr("init-1", lim=cpu("5")),
                ctr("restartable-init-1", lim=cpu("1"), sidecar=True),
                ctr("restartable-init-2", lim=cpu("2"), sidecar=True),
                ctr("init-2", lim=cpu("5")),
                ctr("restartable-init-3", lim=cpu("3"), sidecar=True),
            ],
        ),
        False,
        False,
        cpu("8"),
    ),
    (
        "restartable-init, init and regular",
        pod(
            [ctr("container-1", lim=cpu("100"))],
            [ctr("restartable-init-1", lim=cpu("10"), sidecar=True), ctr("init-1", lim=cpu("200"))],
        ),
        False,
        False,
        cpu("210"),
    ),
    (
        "pod scaled up",
        pod([ctr("container-1", lim=mem("2Gi"))], statuses=[status("container-1", lim=mem("1Gi"))]),
        True,
        False,
        mem("2Gi"),
    ),
    (
        "pod scaled down",
        pod([ctr("container-1", lim=mem("1Gi"))], statuses=[status("container-1", lim=mem("2Gi"))]),
        True,
        False,
        mem("2Gi"),
    ),
    (
        "pod scaled down, don't use status",
        pod([ctr("container-1", lim=mem("1Gi"))], statuses=[status("container-1", lim=mem("2Gi"))]),
        False,
        False,
        mem("1Gi"),
    ),
    (
        "pod scaled up with restartable init containers",
        pod(
            init=[ctr("restartable-init-1", lim=mem("2Gi"), sidecar=True)],
            init_statuses=[status("restartable-init-1", lim=mem("1Gi"))],
        ),
        True,
        False,
        mem("2Gi"),
    ),
    (
        "pod scaled down with restartable init containers",
        pod(
            init=[ctr("restartable-init-1", lim=mem("1Gi"), sidecar=True)],
            init_statuses=[status("restartable-init-1", lim=mem("2Gi"))],
        ),
        True,
        False,
        mem("2Gi"),
    ),
    (
        "pod scaled down with restartable init containers, don't use status",
        pod(
            init=[ctr("restartable-init-1", lim=mem("1Gi"), sidecar=True)],
            init_statuses=[status("restartable-init-1", lim=mem("2Gi"))],
        ),
        False,
        False,
        mem("1Gi"),
    ),
]


@pytest.mark.parametrize(("case", "model", "use_status", "exclude_overhead", "expected"), LIMIT_CASES)
def test_pod_resource_limits(case, model, use_status, exclude_overhead, expected):
    assert upstream_limits(model, use_status=use_status, exclude_overhead=exclude_overhead) == units(expected)


# -- TestPodLevelResourceRequests -----------------------------------------------------------------
MC = {"memory": "3Mi", "cpu": "2m"}
HP2, HP1 = "hugepages-2Mi", "hugepages-1Gi"
POD_LEVEL_CASES = [
    # (name, pod-level resources, containers, init containers, skip pod level, expected)
    ("nil", {}, [], [], False, {}),
    ("pod level memory, skipped", {"requests": mem("2Mi")}, [], [], True, {}),
    ("pod level memory", {"requests": mem("2Mi")}, [], [], False, mem("2Mi")),
    (
        "pod level memory and container level cpu",
        {"requests": mem("2Mi")},
        [ctr(req=cpu("2m"))],
        [],
        False,
        {"memory": "2Mi", "cpu": "2m"},
    ),
    (
        "unsupported resource at both pod level and container level",
        {"requests": {"storage": "2Mi"}},
        [ctr(req={"storage": "3Mi"})],
        [],
        False,
        {"storage": "3Mi"},
    ),
    (
        "unsupported resource at pod level only",
        {"requests": {"storage": "2Mi"}},
        [ctr(req=mem("3Mi"))],
        [],
        False,
        mem("3Mi"),
    ),
    ("only container level resources", None, [ctr(req=MC)], [], False, MC),
    (
        "both container-level and pod-level resources",
        {"requests": {"memory": "6Mi", "cpu": "8m"}},
        [ctr(req=MC)],
        [],
        False,
        {"memory": "6Mi", "cpu": "8m"},
    ),
    (
        "container-level resources and init container",
        None,
        [ctr(req=MC)],
        [ctr(req={"memory": "5Mi", "cpu": "4m"})],
        False,
        {"memory": "5Mi", "cpu": "4m"},
    ),
    (
        "container-level resources and init container, pod level skipped",
        None,
        [ctr(req=MC)],
        [ctr(req={"memory": "5Mi", "cpu": "4m"})],
        True,
        {"memory": "5Mi", "cpu": "4m"},
    ),
    (
        "container-level resources and sidecar container",
        None,
        [ctr(req=MC)],
        [ctr(req={"memory": "5Mi", "cpu": "4m"}, sidecar=True)],
        False,
        {"memory": "8Mi", "cpu": "6m"},
    ),
    (
        "container-level resources, init and sidecar container",
        None,
        [ctr(req=MC)],
        [ctr(req={"memory": "5Mi", "cpu": "4m"}, sidecar=True), ctr(req={"memory": "6Mi", "cpu": "8m"})],
        False,
        {"memory": "11Mi", "cpu": "12m"},
    ),
    (
        "pod-level resources, container-level resources, init and sidecar container",
        {"requests": {"memory": "15Mi", "cpu": "18m"}},
        [ctr(req=MC)],
        [ctr(req={"memory": "5Mi", "cpu": "4m"}, sidecar=True), ctr(req={"memory": "6Mi", "cpu": "8m"})],
        False,
        {"memory": "15Mi", "cpu": "18m"},
    ),
    (
        "pod-level hugepages, single page size",
        {"limits": {HP2: "2Mi"}, "requests": {"memory": "10Mi", HP2: "2Mi"}},
        [],
        [],
        False,
        {"memory": "10Mi", HP2: "2Mi"},
    ),
    (
        "pod-level hugepages, multiple page sizes",
        {"limits": {HP2: "2Mi", HP1: "1Gi"}, "requests": {"cpu": "1", HP2: "2Mi", HP1: "1Gi"}},
        [],
        [],
        False,
        {"cpu": "1", HP2: "2Mi", HP1: "1Gi"},
    ),
    (
        "pod-level and container-level hugepages, single page size",
        {"limits": {HP2: "10Mi"}, "requests": {"cpu": "1", HP2: "10Mi"}},
        [ctr(req={HP2: "6Mi"}, lim={HP2: "6Mi"})],
        [],
        False,
        {"cpu": "1", HP2: "10Mi"},
    ),
    (
        "pod-level and container-level hugepages, multiple page sizes",
        {"limits": {HP2: "10Mi", HP1: "2Gi"}, "requests": {"cpu": "1", HP2: "10Mi", HP1: "2Gi"}},
        [ctr(req={"cpu": "1", HP1: "2Gi"}, lim={HP1: "2Gi"})],
        [],
        False,
        {"cpu": "1", HP2: "10Mi", HP1: "2Gi"},
    ),
    (
        "hugepages page sizes split between pod level and container level",
        {"limits": {HP2: "10Mi"}, "requests": {"cpu": "1", HP2: "10Mi"}},
        [ctr(req={"memory": "4Mi", HP1: "1Gi"}, lim={HP1: "1Gi"})],
        [],
        False,
        {"cpu": "1", "memory": "4Mi", HP2: "10Mi", HP1: "1Gi"},
    ),
]


@pytest.mark.parametrize(("case", "resources", "containers", "init", "skip", "expected"), POD_LEVEL_CASES)
def test_pod_level_resource_requests(case, resources, containers, init, skip, expected):
    model = pod(containers, init, pod_level=resources)
    assert upstream_requests(model, skip_pod_level=skip) == units(expected)


# -- TestAggregateContainerRequestsAndLimits (no overhead, no pod-level resources) ----------------
AGGREGATE_CASES = [
    ("one container with limits", pod([ctr(lim=cpu("9"))]), {}, cpu("9")),
    ("two containers with limits", pod([ctr(lim=cpu("9")), ctr(lim=cpu("9"))]), {}, cpu("18")),
    ("one container with requests", pod([ctr(req=cpu("9"))]), cpu("9"), {}),
    ("two containers with requests", pod([ctr(req=cpu("9")), ctr(req=cpu("9"))]), cpu("18"), {}),
    (
        "regular and init containers with requests",
        pod([ctr(req=cpu("9"))], [ctr(req=cpu("9"))]),
        cpu("9"),
        {},
    ),
    (
        "regular, init and sidecar containers with requests",
        pod([ctr(req=cpu("9"))], [ctr(req=cpu("8"), sidecar=True), ctr(req=cpu("6"))]),
        cpu("17"),
        {},
    ),
    ("regular and init containers with limits", pod([ctr(lim=cpu("9"))], [ctr(lim=cpu("9"))]), {}, cpu("9")),
    (
        "regular, init and sidecar containers with limits",
        pod([ctr(lim=cpu("9"))], [ctr(lim=cpu("8"), sidecar=True), ctr(lim=cpu("6"))]),
        {},
        cpu("17"),
    ),
    (
        "regular containers with empty requests, but status with non-empty requests",
        pod([ctr("container-1")], statuses=[status("container-1", cpu("2"))]),
        cpu("2"),
        {},
    ),
    (
        "always-restart init containers with empty requests, but status with non-empty requests",
        pod(init=[ctr("container-1", sidecar=True)], init_statuses=[status("container-1", cpu("2"))]),
        cpu("2"),
        {},
    ),
]


@pytest.mark.parametrize(("case", "model", "requests", "limits"), AGGREGATE_CASES)
def test_aggregate_container_requests_and_limits(case, model, requests, limits):
    assert upstream_requests(model, exclude_overhead=True) == units(requests)
    assert upstream_limits(model, exclude_overhead=True) == units(limits)


# -- PodLimits with pod-level resources (helpers.go PodLimits; the example) ---------------
def test_pod_level_limit_replaces_the_container_sum():
    model = pod([ctr("a", lim=cpu("2")), ctr("b", lim=cpu("2"))], pod_level={"limits": cpu("2")})
    assert upstream_limits(model) == units(cpu("2"))


def test_pod_level_limits_apply_when_only_pod_level_requests_name_a_supported_resource():
    model = pod([ctr("a", lim={"cpu": "1", "ephemeral-storage": "1Gi"})], pod_level={"requests": mem("1Gi")})
    # IsPodLevelResourcesSet holds; no pod-level limit, so the container aggregate stays.
    assert upstream_limits(model) == units({"cpu": "1", "ephemeral-storage": "1Gi"})


def test_pod_level_limits_ignore_unsupported_names():
    model = pod(
        [ctr("a", lim={"ephemeral-storage": "1Gi"})], pod_level={"limits": {"ephemeral-storage": "5Gi"}}
    )
    assert upstream_limits(model) == units({"ephemeral-storage": "1Gi"})
