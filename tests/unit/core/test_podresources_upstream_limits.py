"""Upstream PodLimits table (TestPodResourceLimits), and PodLimits with pod-level resources.

Source: kubernetes/component-helpers `resource/helpers_test.go` at tag v0.35.7 (Kubernetes 1.35),
commit e2af1bd7bef973f14494f15bbea1eaa216cff15c: TestPodResourceLimits; the pod-level cases follow
helpers.go PodLimits. The cases (names, inputs, expected lists) are written out again here in Python; the functions under test are
`limitguard.core.podresources.upstream_requests` / `upstream_limits` (the upstream rules, without
limitguard's limit-else-request rule) with the same options. Quantities are compared as exact
units (millicores for cpu, bytes otherwise). The pod model builders are in upstream_pods.py.
"""

from __future__ import annotations

import pytest

from limitguard.core.podsums import upstream_limits
from tests.unit.core.upstream_pods import HELPERS_RULES, cpu, ctr, mem, pod, status, units

# -- TestPodResourceLimits ------------------------------------------------------------------------
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
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_resource_limits(rules, case, model, use_status, exclude_overhead, expected):
    assert upstream_limits(
        model, rules=rules, use_status=use_status, exclude_overhead=exclude_overhead
    ) == units(expected)


# -- PodLimits with pod-level resources (helpers.go PodLimits; the example) ---------------
@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_level_limit_replaces_the_container_sum(rules):
    model = pod([ctr("a", lim=cpu("2")), ctr("b", lim=cpu("2"))], pod_level={"limits": cpu("2")})
    assert upstream_limits(model, rules=rules) == units(cpu("2"))


@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_level_limits_apply_when_only_pod_level_requests_name_a_supported_resource(rules):
    model = pod([ctr("a", lim={"cpu": "1", "ephemeral-storage": "1Gi"})], pod_level={"requests": mem("1Gi")})
    # IsPodLevelResourcesSet holds; no pod-level limit, so the container aggregate stays.
    assert upstream_limits(model, rules=rules) == units({"cpu": "1", "ephemeral-storage": "1Gi"})


@pytest.mark.parametrize("rules", HELPERS_RULES)
def test_pod_level_limits_ignore_unsupported_names(rules):
    model = pod(
        [ctr("a", lim={"ephemeral-storage": "1Gi"})], pod_level={"limits": {"ephemeral-storage": "5Gi"}}
    )
    assert upstream_limits(model, rules=rules) == units({"ephemeral-storage": "1Gi"})
