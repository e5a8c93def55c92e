"""Upstream's QoS test table, translated case by case.

Source: kubernetes/kubernetes `pkg/apis/core/v1/helper/qos/qos_test.go` (TestComputePodQOS, which
checks both the v1 and the internal `pkg/apis/core/helper/qos` ComputePodQOS), file version at
commit 00c269c7d269989d555b69c295ba88e73e8acf94; rules of `pkg/apis/core/helper/qos/qos.go` at
0fafce482ed284416d4996d718aa1a743d362b6b. Cases with pod-level resources are the ones upstream runs
with the PodLevelResources gate on (on by default since 1.34). The function under test is
`limitguard.core.qos.compute_pod_qos`, which the mutating webhook uses to decide what is best-effort.
"""

from __future__ import annotations

import pytest

from limitguard.core.podrules import RULES
from limitguard.core.qos import QOSClass, compute_pod_qos

G, B, BE = QOSClass.GUARANTEED, QOSClass.BURSTABLE, QOSClass.BEST_EFFORT


def rl(cpu: str = "", memory: str = "", **extra: str) -> dict[str, str]:
    out = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    out.update({k.replace("_", "-"): v for k, v in extra.items()})
    return out


def ctr(name: str, requests: dict, limits: dict) -> dict:
    return {"name": name, "resources": {"requests": requests, "limits": limits}}


def spec(containers, init=(), pod_level: tuple[dict, dict] | None = None) -> dict:
    body = {"containers": list(containers), "initContainers": list(init)}
    if pod_level is not None:
        body["resources"] = {"requests": pod_level[0], "limits": pod_level[1]}
    return body


CASES = [
    ("guaranteed", spec([ctr("g", rl("100m", "100Mi"), rl("100m", "100Mi"))]), G),
    (
        "guaranteed-guaranteed",
        spec(
            [
                ctr("g", rl("100m", "100Mi"), rl("100m", "100Mi")),
                ctr("g", rl("100m", "100Mi"), rl("100m", "100Mi")),
            ]
        ),
        G,
    ),
    ("best-effort-best-effort", spec([ctr("be", rl(), rl()), ctr("be", rl(), rl())]), BE),
    ("best-effort", spec([ctr("be", rl(), rl())]), BE),
    ("best-effort-burstable", spec([ctr("be", rl(), rl()), ctr("b", rl("1"), rl("2"))]), B),
    (
        "best-effort-guaranteed",
        spec([ctr("be", rl(), rl()), ctr("g", rl("10m", "100Mi"), rl("10m", "100Mi"))]),
        B,
    ),
    ("burstable-cpu-guaranteed-memory", spec([ctr("b", rl(memory="100Mi"), rl(memory="100Mi"))]), B),
    ("burstable-no-limits", spec([ctr("b", rl("100m", "100Mi"), rl())]), B),
    (
        "burstable-guaranteed",
        spec(
            [ctr("b", rl("1", "100Mi"), rl("2", "100Mi")), ctr("g", rl("100m", "100Mi"), rl("100m", "100Mi"))]
        ),
        B,
    ),
    (
        "burstable-unbounded-but-requests-match-limits",
        spec([ctr("b", rl("100m", "100Mi"), rl("200m", "200Mi")), ctr("u", rl("100m", "100Mi"), rl())]),
        B,
    ),
    ("burstable-1", spec([ctr("b", rl("10m", "100Mi"), rl("100m", "200Mi"))]), B),
    ("burstable-2 (zero requests are unset)", spec([ctr("b", rl("0", "0"), rl("100m", "200Mi"))]), B),
    (
        "best-effort-hugepages (zeros and hugepages do not count)",
        spec([ctr("be", rl("0", "0", hugepages_2Mi="1Gi"), rl("0", "0", hugepages_2Mi="1Gi"))]),
        BE,
    ),
    (
        "init-container",
        spec([ctr("be", rl(), rl())], init=[ctr("b", rl("10m", "100Mi"), rl("100m", "200Mi"))]),
        B,
    ),
    (
        "guaranteed-with-pod-level-resources",
        spec([ctr("be", rl(), rl())], pod_level=(rl("10m", "100Mi"), rl("10m", "100Mi"))),
        G,
    ),
    (
        "guaranteed-with-pod-and-container-level-resources",
        spec(
            [ctr("b", rl("3m", "10Mi"), rl("5m", "20Mi"))], pod_level=(rl("10m", "100Mi"), rl("10m", "100Mi"))
        ),
        G,
    ),
    (
        "burstable-with-pod-level-resources",
        spec([ctr("be", rl(), rl())], pod_level=(rl("10m", "10Mi"), rl("20m", "50Mi"))),
        B,
    ),
    (
        "burstable-with-pod-and-container-level-resources",
        spec(
            [ctr("b", rl("5m", "10Mi"), rl("5m", "10Mi"))], pod_level=(rl("10m", "10Mi"), rl("20m", "50Mi"))
        ),
        B,
    ),
    (
        "burstable-with-pod-and-container-level-requests",
        spec([ctr("b", rl("5m", "10Mi"), rl())], pod_level=(rl("10m", "10Mi"), rl())),
        B,
    ),
    (
        "burstable-with-pod-and-container-level-resources-2",
        spec(
            [ctr("b", rl("5m", "10Mi"), rl()), ctr("g", rl("5m", "10Mi"), rl("5m", "10Mi"))],
            pod_level=(rl("10m", "10Mi"), rl("5m")),
        ),
        B,
    ),
]


@pytest.mark.parametrize(("case", "pod_spec", "expected"), CASES)
def test_compute_pod_qos(case, pod_spec, expected):
    assert compute_pod_qos(pod_spec) is expected, case


def test_pod_level_limit_alone_makes_a_pod_with_bare_containers_burstable():
    """The issue's case: only spec.resources.limits.cpu is set; the pod is not best-effort."""
    assert compute_pod_qos(spec([ctr("a", rl(), rl())], pod_level=(rl(), rl("250m")))) is B


# -- PodLevelResourcesFixKubeletQOSClass (on from 1.37) -----------------------------------------------
# Source: kubernetes `pkg/apis/core/helper/qos/qos.go` at 0fafce482ed284416d4996d718aa1a743d362b6b:
# with the gate off, any non-nil spec.resources takes the pod-level branch; with it on, only one
# naming a supported pod-level resource (isPodLevelResourcesSet).
GUARANTEED_CONTAINER = ctr("g", rl("100m", "100Mi"), rl("100m", "100Mi"))
EMPTY_POD_LEVEL_CASES = [
    # (name, spec.resources, expected before 1.37, expected from 1.37)
    ("empty resources object", {}, BE, G),
    ("empty requests map", {"requests": {}}, BE, G),
    ("empty requests and limits maps", {"requests": {}, "limits": {}}, BE, G),
    ("only an unsupported pod-level resource", {"limits": {"ephemeral-storage": "1Gi"}}, BE, G),
    ("a supported pod-level resource", {"limits": rl("1")}, B, B),
]


@pytest.mark.parametrize(("case", "pod_level", "before", "after"), EMPTY_POD_LEVEL_CASES)
def test_empty_pod_level_maps_stop_deciding_qos_in_137(case, pod_level, before, after):
    body = {"containers": [GUARANTEED_CONTAINER], "resources": pod_level}
    assert compute_pod_qos(body, RULES[36]) is before, case
    assert compute_pod_qos(body, RULES[31]) is before, case
    assert compute_pod_qos(body, RULES[37]) is after, case


def test_absent_pod_level_resources_leave_qos_to_the_containers_in_every_release():
    body = {"containers": [GUARANTEED_CONTAINER], "resources": None}
    assert {compute_pod_qos(body, rules) for rules in RULES.values()} == {G}
