"""Upstream PodRequests / PodLimits tables for whole-pod totals, translated case by case.

Source: kubernetes/component-helpers `resource/helpers_test.go` at tag v0.35.7 (Kubernetes 1.35),
commit e2af1bd7bef973f14494f15bbea1eaa216cff15c: TestPodRequestsAndLimits, TestPodRequestsAndLimitsWithoutOverhead and
TestAggregateContainerRequestsAndLimits. The cases (names, inputs, expected lists)
are written out again here in Python; the functions under test are
`limitguard.core.podresources.upstream_requests` / `upstream_limits` (the upstream rules, without
limitguard's limit-else-request rule) with the same options. Quantities are compared as exact
units (millicores for cpu, bytes otherwise). The pod model builders are in upstream_pods.py.
"""

from __future__ import annotations

import pytest

from limitguard.core.podsums import upstream_limits, upstream_requests
from tests.unit.core.upstream_pods import HELPERS_RULES, cpu, ctr, pod, status, units


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
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_requests_and_limits(rules, case, model, requests, limits):
    assert upstream_requests(model, rules=rules) == units(requests), case
    assert upstream_limits(model, rules=rules) == units(limits), case


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
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_requests_and_limits_without_overhead(rules, case, model, requests, limits):
    assert upstream_requests(model, rules=rules, exclude_overhead=True) == units(requests), case
    assert upstream_limits(model, rules=rules, exclude_overhead=True) == units(limits), case


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
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_aggregate_container_requests_and_limits(rules, case, model, requests, limits):
    assert upstream_requests(model, rules=rules, exclude_overhead=True) == units(requests)
    assert upstream_limits(model, rules=rules, exclude_overhead=True) == units(limits)
