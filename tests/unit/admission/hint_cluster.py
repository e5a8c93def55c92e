"""A small cluster for the placement-hint tests, and NodeAffinity's preferred scoring as a model.

`node_affinity_scores` models how kube-scheduler's NodeAffinity plugin scores a pod's preferred
terms (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, Score
and NormalizeScore, read at commit 00d375050338, the newest stored): a node's score is the sum of
the weights of the preferred terms it matches, normalised by helper.DefaultNormalizeScore to
100 x score / highest score (all 0 when the highest is 0). A requirement is a label selector
(k8s.io/component-helpers nodeaffinity): `NotIn` matches a node without the label.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import orjson

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.config import Config, Enforcement, HintMode, LimitAwareConfig, PlacementHints
from limitguard.core.defaults import OPT_IN_LABEL, OPT_IN_VALUE
from limitguard.core.hints import HOSTNAME_LABEL, PREFERRED
from limitguard.core.response import JsonPatch
from limitguard.core.usescheduler import USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE
from limitguard.state.store import ClusterState
from tests.support import LEDGER_NEVER_EXPIRES, namespace, node, pod, pod_create

FULL = ("node-0", "node-1")  # 8 cpu x 125% = 10 cpu of limit capacity, 9 of it taken
SCHEDULER = "limitguard-scheduler"  # what with_scheduler_namespace configures


def cluster(nodes: int = 5, full: tuple[str, ...] = FULL, hostnames: dict[str, str | None] | None = None):
    """*nodes* nodes of 8 cpu; those in *full* have 9 of their 10 cpu of limit capacity taken.
    *hostnames* gives a node another hostname label value (None: no label)."""
    state = ClusterState(ledger_ttl_seconds=LEDGER_NEVER_EXPIRES)
    objects = []
    for index in range(nodes):
        name = f"node-{index}"
        built = node(name)
        if hostnames and name in hostnames:
            if hostnames[name] is None:
                del built["metadata"]["labels"][HOSTNAME_LABEL]
            else:
                built["metadata"]["labels"][HOSTNAME_LABEL] = hostnames[name]
        objects.append(built)
    state.replace_nodes(objects)
    opted_in = namespace("default", labels={OPT_IN_LABEL: OPT_IN_VALUE})  # defaults too
    state.replace_namespaces([opted_in, namespace("team-a"), namespace("kube-system")])
    state.replace_pods([pod(f"big-{name}", node_name=name, cpu="9") for name in full])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


def with_scheduler_namespace() -> tuple[ClusterState, Config]:
    """The hint cluster (2 of 5 nodes full), with "sched" asking for limitguard's scheduler."""
    state = cluster()
    state.replace_namespaces(
        [
            namespace("default", labels={OPT_IN_LABEL: OPT_IN_VALUE}),
            namespace("sched", labels={USE_SCHEDULER_LABEL: USE_SCHEDULER_VALUE}),
            namespace("kube-system"),
        ]
    )
    hints = settings()
    return state, Config(
        limit_aware=hints.limit_aware, placement_hints=hints.placement_hints, use_scheduler_name=SCHEDULER
    )


def settings(
    mode: HintMode = HintMode.AUTO,
    enforcement: Enforcement = Enforcement.DENY,
    per_namespace: dict[str, Enforcement] | None = None,
    max_nodes: int = 500,
    weight: int = 100,
) -> Config:
    return Config(
        limit_aware=LimitAwareConfig(
            default_ratios={"cpu": 125}, enforcement=enforcement, namespace_enforcement=per_namespace or {}
        ),
        placement_hints=PlacementHints(mode, weight, max_nodes),
    )


def mutate(state: ClusterState, config: Config, pod_object: dict[str, Any], **routes: bool):
    """The answer of /mutate to creating *pod_object*, and the pod as the patch leaves it."""
    request = decode_review(orjson.dumps(pod_create(pod_object)))
    answer = Mutator(state, config, **routes)(request)
    assert answer.allowed
    return answer, applied(pod_object, answer.patch)


def applied(pod_object: dict[str, Any], patch: JsonPatch | None) -> dict[str, Any]:
    """*pod_object* as *patch* leaves it."""
    return pod_object if patch is None else jsonpatch.apply_patch(pod_object, patch.operations())


def hint_terms(pod_object: dict[str, Any]) -> list[dict[str, Any]]:
    node_affinity = (pod_object["spec"].get("affinity") or {}).get("nodeAffinity") or {}
    return node_affinity.get(PREFERRED) or []


def our_expression(pod_object: dict[str, Any]) -> dict[str, Any]:
    (term,) = [
        t for t in hint_terms(pod_object) if t["preference"]["matchExpressions"][0]["key"] == HOSTNAME_LABEL
    ]
    return term["preference"]["matchExpressions"][0]


def node_affinity_scores(pod_object: dict[str, Any], nodes: dict[str, dict[str, str]]) -> dict[str, int]:
    """NodeAffinity's normalised score (0-100) of each node (name -> labels) for *pod_object*."""

    def matches(requirement: dict[str, Any], labels: dict[str, str]) -> bool:
        key, operator, values = requirement["key"], requirement["operator"], requirement.get("values", [])
        if operator == "In":
            return key in labels and labels[key] in values
        if operator == "NotIn":
            return key not in labels or labels[key] not in values
        raise AssertionError(f"operator {operator} not modelled")

    raw = {
        name: sum(
            term["weight"]
            for term in hint_terms(pod_object)
            if term["preference"].get("matchExpressions")
            and all(matches(r, labels) for r in term["preference"]["matchExpressions"])
        )
        for name, labels in nodes.items()
    }
    highest = max(raw.values(), default=0)
    return {name: (100 * score // highest if highest else 0) for name, score in raw.items()}


def labels_of(state: ClusterState) -> dict[str, dict[str, str]]:
    return {record.name: dict(record.traits.labels) for record in state.nodes()}


def limited(
    name: str = "web-1", cpu: str = "2", namespace_name: str = "default", **spec: Any
) -> dict[str, Any]:
    return pod(name, namespace=namespace_name, cpu=cpu, phase="Pending", **spec)
