"""Upstream pod-level resources table (TestPodLevelResourceRequests), translated case by case.

Source: kubernetes/component-helpers `resource/helpers_test.go` at tag v0.35.7 (Kubernetes 1.35),
commit e2af1bd7bef973f14494f15bbea1eaa216cff15c: TestPodLevelResourceRequests. The cases (names, inputs, expected lists)
are written out again here in Python; the functions under test are
`limitguard.core.podresources.upstream_requests` / `upstream_limits` (the upstream rules, without
limitguard's limit-else-request rule) with the same options. Quantities are compared as exact
units (millicores for cpu, bytes otherwise). The pod model builders are in upstream_pods.py.
"""

from __future__ import annotations

import pytest

from limitguard.core.podsums import upstream_requests
from tests.unit.core.upstream_pods import HELPERS_RULES, cpu, ctr, mem, pod, units

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
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_level_resource_requests(rules, case, resources, containers, init, skip, expected):
    model = pod(containers, init, pod_level=resources)
    assert upstream_requests(model, rules=rules, skip_pod_level=skip) == units(expected)
