"""Random clusters for the node-table property tests: node, pod and ledger operations, pods to
place, configurations and scorer sets (hypothesis strategies)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from limitguard.admission.review import decode_review
from limitguard.core.config import Config, Enforcement, LimitAwareConfig, UnboundPolicy
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.core.scoring import ScorerConfig
from limitguard.core.scoring.fitplus import FitPlusArgs, ResourceStrategy, Strategy
from limitguard.core.scoring.limitaware import LimitAwareArgs
from limitguard.core.scoring.scarce import ScarceResourceArgs
from limitguard.state.store import ClusterState
from tests.support import container

NODE_NAMES = [f"n{index}" for index in range(8)]
CANDIDATE_NAMES = [*NODE_NAMES, "ghost-1", "ghost-2"]  # ghosts are never in the state
POD_NAMES = [f"p{index}" for index in range(10)]
GPU = "nvidia.com/gpu"
TAINTS = [
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "value": "", "effect": "NoExecute"},
    {"key": "soft", "value": "", "effect": "PreferNoSchedule"},
]
ANNOTATIONS = [
    None,
    '{"cpu": 200}',
    '{"cpu": "100%", "memory": 120}',
    '{"nvidia.com/gpu": 100}',
    "{}",
    "nope",
]
CPU = ["0", "100m", "1", "3", "16"]
MEMORY = ["0", "256Mi", "1Gi", "8Gi", "8Pi", "16Pi"]  # 16Pi is past 2**53 bytes: a wide column


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def node_objects(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(NODE_NAMES))
    labels = {"kubernetes.io/hostname": name}
    for key, values in (("zone", ["a", "b", "c"]), ("tier", ["1", "5", "10", "x"]), ("gpu", ["yes"])):
        value = draw(_maybe(st.sampled_from(values)))
        if value is not None:
            labels[key] = value
    allocatable = {"cpu": draw(st.sampled_from(CPU)), "memory": draw(st.sampled_from(MEMORY[:4]))}
    gpus = draw(_maybe(st.sampled_from(["0", "1", "4"])))
    if gpus is not None:
        allocatable[GPU] = gpus
    huge = draw(st.integers(0, 39))
    if huge < 2:  # 8Pi is exactly 2**53 bytes (x 120% is past it), 16Pi is past it
        allocatable["memory"] = MEMORY[4 + huge]
    annotation = draw(st.sampled_from(ANNOTATIONS))
    spec: dict[str, Any] = {}
    if draw(st.integers(0, 2)) == 0:
        spec["taints"] = draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=str))
    if draw(st.integers(0, 4)) == 0:
        spec["unschedulable"] = True
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if annotation is not None:
        metadata["annotations"] = {RATIO_ANNOTATION: annotation}
    return {"kind": "Node", "metadata": metadata, "spec": spec, "status": {"allocatable": allocatable}}


@st.composite
def resources(draw: st.DrawFn) -> dict[str, str] | None:
    amounts = {}
    for resource, values in (
        ("cpu", ["0", "100m", "1", "3", "8"]),
        ("memory", ["0", "1Gi", "4Gi"]),
        (GPU, ["0", "2"]),
    ):
        value = draw(_maybe(st.sampled_from(values)))
        if value is not None:
            amounts[resource] = value
    if draw(st.integers(0, 49)) == 0:
        amounts["memory"] = "16Pi"
    return amounts or None


@st.composite
def pod_objects(draw: st.DrawFn, bound: bool = True) -> dict[str, Any]:
    name = draw(st.sampled_from(POD_NAMES))
    containers = [
        container(f"c{index}", limits=draw(resources()), requests=draw(resources()))
        for index in range(draw(st.integers(1, 2)))
    ]
    spec: dict[str, Any] = {"containers": containers}
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    status: dict[str, Any] = {"phase": draw(st.sampled_from(["Running", "Pending", "Succeeded"]))}
    if bound:
        node_name = draw(_maybe(st.sampled_from([*NODE_NAMES, "ghost-1"])))
        if node_name:
            spec["nodeName"] = node_name
        if draw(st.integers(0, 4)) == 0:
            metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        nominated = draw(_maybe(st.sampled_from(NODE_NAMES)))
        if nominated:
            status["nominatedNodeName"] = nominated
    return {"kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


LIMITS = st.dictionaries(
    st.sampled_from(["cpu", "memory", GPU]),
    st.sampled_from([0, 100, 1000, 4000, 2**30] * 8 + [2**60]),  # 2**60: past the table's exact range
    max_size=3,
)

OPERATIONS = st.one_of(
    st.tuples(st.just("node"), node_objects()),
    st.tuples(st.just("delete-node"), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("pod"), pod_objects()),
    st.tuples(st.just("delete-pod"), st.sampled_from(POD_NAMES)),
    st.tuples(st.just("reserve"), st.sampled_from(NODE_NAMES), st.sampled_from(POD_NAMES), LIMITS),
    st.tuples(st.just("release"), st.sampled_from(POD_NAMES)),
)


def apply(state: ClusterState, operation: tuple[Any, ...]) -> None:
    kind = operation[0]
    if kind == "node":
        state.upsert_node(operation[1])
    elif kind == "delete-node":
        state.remove_node(operation[1])
    elif kind == "pod":
        state.upsert_pod(operation[1])
    elif kind == "delete-pod":
        state.remove_pod(f"default/{operation[1]}")
    elif kind == "reserve":
        state.ledger.reserve(operation[1], f"default/{operation[2]}", operation[3])
    else:
        state.ledger.release(f"default/{operation[1]}")


@st.composite
def placements(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["nodeSelector"] = {"zone": draw(st.sampled_from(["a", "b", "z"]))}
    if draw(st.booleans()):
        requirement = draw(
            st.sampled_from(
                [
                    {"key": "zone", "operator": "In", "values": ["a", "c"]},
                    {"key": "zone", "operator": "NotIn", "values": ["a"]},
                    {"key": "gpu", "operator": "Exists"},
                    {"key": "gpu", "operator": "DoesNotExist"},
                    {"key": "tier", "operator": "Gt", "values": ["4"]},
                    {"key": "tier", "operator": "Lt", "values": ["6"]},
                ]
            )
        )
        field = draw(
            st.sampled_from(
                [
                    None,
                    {"key": "metadata.name", "operator": "In", "values": ["n1", "n2", "n3"]},
                    {"key": "metadata.name", "operator": "NotIn", "values": ["n0"]},
                    {"key": "metadata.name", "operator": "Exists"},
                    {"key": "spec.other", "operator": "DoesNotExist"},
                ]
            )
        )
        term: dict[str, Any] = {"matchExpressions": [requirement]}
        if field is not None:
            term["matchFields"] = [field]
        terms = [term] + ([{}] if draw(st.booleans()) else [])
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    tolerations = draw(
        st.lists(
            st.sampled_from(
                [
                    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
                    {"key": "spot", "operator": "Exists"},
                    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
                    {"operator": "Exists"},
                ]
            ),
            max_size=2,
        )
    )
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


CONFIGS = st.builds(
    lambda ratios, enforcement, unbound, exempt: Config(
        limit_aware=LimitAwareConfig(
            default_ratios=ratios, enforcement=enforcement, unbound_pods=unbound, exempt_daemonset_pods=exempt
        )
    ),
    st.sampled_from(
        [{"cpu": 150, "memory": 120}, {"cpu": 100}, {}, {GPU: 100, "memory": 100}, {"cpu": 1000}]
        + [{"cpu": 100, "memory": 100}] * 3
        + [{"cpu": 5000}]  # beyond what int64 can multiply safely: the reference path answers
    ),
    st.sampled_from(list(Enforcement)),
    st.sampled_from([UnboundPolicy.DENY, UnboundPolicy.WARN]),
    st.booleans(),
)


def unbound_request(pod: dict[str, Any], placement: dict[str, Any], daemonset: bool) -> Any:
    pod["spec"].update(placement)
    pod["spec"].pop("nodeName", None)
    if daemonset:
        pod["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "ds", "uid": "d"}]
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "default",
            "name": pod["metadata"]["name"],
            "operation": "CREATE",
            "object": pod,
        },
    }
    return decode_review(json.dumps(review).encode())


def synced_state() -> ClusterState:
    state = ClusterState()
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


SCORERS = st.lists(
    st.one_of(
        st.builds(
            lambda weight, weights, ratios: ScorerConfig(
                "LimitAware", weight, LimitAwareArgs(weights, ratios)
            ),
            st.integers(0, 3),
            st.sampled_from([{"cpu": 1, "memory": 1}, {"cpu": 2, GPU: 1}, {"memory": 0}]),
            st.sampled_from([None, {"cpu": 300}, {"cpu": 100, "memory": 100}]),
        ),
        st.builds(
            lambda weight, most: ScorerConfig(
                "NodeResourcesFitPlus",
                weight,
                FitPlusArgs(
                    {
                        "cpu": ResourceStrategy(Strategy.LEAST_ALLOCATED, 1),
                        "memory": ResourceStrategy(
                            Strategy.MOST_ALLOCATED if most else Strategy.LEAST_ALLOCATED, 2
                        ),
                        GPU: ResourceStrategy(Strategy.MOST_ALLOCATED, 3),
                    }
                ),
            ),
            st.integers(0, 3),
            st.booleans(),
        ),
        st.builds(
            lambda weight: ScorerConfig(
                "ScarceResourceAvoidance", weight, ScarceResourceArgs(frozenset({GPU}))
            ),
            st.integers(0, 3),
        ),
        st.builds(lambda weight: ScorerConfig("PodState", weight), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=4,
    unique_by=lambda scorer: scorer.name,
)
