"""Upstream PodRequests table (TestPodResourceRequests), translated case by case.

Source: kubernetes/component-helpers `resource/helpers_test.go` at tag v0.35.7 (Kubernetes 1.35),
commit e2af1bd7bef973f14494f15bbea1eaa216cff15c: TestPodResourceRequests. The cases (names, inputs, expected lists)
are written out again here in Python; the functions under test are
`limitguard.core.podresources.upstream_requests` / `upstream_limits` (the upstream rules, without
limitguard's limit-else-request rule) with the same options. Quantities are compared as exact
units (millicores for cpu, bytes otherwise). The pod model builders are in upstream_pods.py.
"""

from __future__ import annotations

import pytest

from limitguard.core.podsums import upstream_requests
from tests.unit.core.upstream_pods import HELPERS_RULES, INFEASIBLE, cpu, ctr, pod, status, units

# -- TestPodResourceRequests ----------------------------------------------------------------------
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
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_resource_requests(rules, case, model, use_status, exclude_overhead, expected):
    assert upstream_requests(
        model, rules=rules, use_status=use_status, exclude_overhead=exclude_overhead
    ) == units(expected)
