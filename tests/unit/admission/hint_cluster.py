"""A small cluster for the placement-hint tests, its nodes labelled with their limit room as the
leader labels them, and NodeAffinity's preferred scoring as a model.

`node_affinity_scores` models how kube-scheduler's NodeAffinity plugin scores a pod's preferred
terms (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, Score
and NormalizeScore): a node's score is the sum of the weights of the preferred terms it matches,
normalised by helper.DefaultNormalizeScore to 100 x score / highest score (all 0 when the highest
is 0). A requirement is a label selector requirement (k8s.io/apimachinery pkg/labels/selector.go
NewRequirement and Requirement.Matches): `Gt` takes exactly one value, the node's label and the
value are parsed with strconv.ParseInt(v, 10, 64), a node without the label or with a value that
does not parse never matches, and the comparison is strict.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import orjson

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.config import Config, Enforcement, HintMode, LimitAwareConfig, PlacementHints
from limitguard.core.defaults import OPT_IN_LABEL, OPT_IN_VALUE
from limitguard.core.hints import PREFERRED, labels_meant
from limitguard.core.quantity import format_units
from limitguard.core.response import JsonPatch
from limitguard.core.roomlabels import desired_labels, is_room_label
from limitguard.core.usescheduler import USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE
from limitguard.state.placement import RatioedResources, live_rows, room_columns
from limitguard.state.store import ClusterState
from tests.support import LEDGER_NEVER_EXPIRES, namespace, node, pod, pod_create

FULL = ("node-0", "node-1")  # 8 cpu x 125% = 10 cpu of limit capacity, 9 of it taken
SCHEDULER = "limitguard-scheduler"  # what with_scheduler_namespace configures
INT64 = (-(2**63), 2**63 - 1)


def cluster(nodes: int = 5, full: tuple[str, ...] = FULL, labelled: bool = True) -> ClusterState:
    """*nodes* nodes of 8 cpu; those in *full* have 9 of their 10 cpu of limit capacity taken;
    *labelled*: carrying their room labels (settings()' ratio) as the leader writes them."""
    state = ClusterState(ledger_ttl_seconds=LEDGER_NEVER_EXPIRES)
    state.replace_nodes([node(f"node-{index}") for index in range(nodes)])
    opted_in = namespace("default", labels={OPT_IN_LABEL: OPT_IN_VALUE})  # defaults too
    state.replace_namespaces([opted_in, namespace("team-a"), namespace("kube-system")])
    state.replace_pods([pod(f"big-{name}", node_name=name, cpu="9") for name in full])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    if labelled:
        relabel(state, settings())
    return state


def node_object(state: ClusterState, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """The Node a record came from (the builders' shape), with *labels* instead of its own."""
    record = state.node(name)
    assert record is not None
    allocatable = {
        resource: format_units(resource, amount) for resource, amount in record.allocatable.items()
    }
    taints = [{"key": t.key, "value": t.value, "effect": t.effect} for t in record.traits.taints]
    built = node(name, taints=taints or None)
    built["metadata"]["labels"] = labels
    built["status"]["allocatable"] = allocatable
    return built


def relabel(state: ClusterState, config: Config) -> None:
    """Write every node's room labels as the leader would (the same functions), at once."""
    resources = RatioedResources(config.limit_aware.default_ratios).update(state)
    if not labels_meant(config):
        resources = frozenset()
    table = state.node_table()
    columns = room_columns(table, resources, config.limit_aware.default_ratios)
    for row, name in list(live_rows(table, columns.changed_rows(None))):
        record = state.node(name)
        assert record is not None
        labels = {key: value for key, value in record.traits.labels.items() if not is_room_label(key)}
        labels.update(desired_labels(columns.at(row)))
        state.upsert_node(node_object(state, name, labels))


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
    weight: int = 100,
    ratios: dict[str, int] | None = None,
) -> Config:
    return Config(
        limit_aware=LimitAwareConfig(
            default_ratios={"cpu": 125} if ratios is None else ratios,
            enforcement=enforcement,
            namespace_enforcement=per_namespace or {},
        ),
        placement_hints=PlacementHints(mode, weight),
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


def our_expressions(pod_object: dict[str, Any]) -> list[dict[str, Any]]:
    (term,) = [
        t
        for t in hint_terms(pod_object)
        if all(is_room_label(e["key"]) for e in t["preference"].get("matchExpressions") or [{"key": ""}])
    ]
    return term["preference"]["matchExpressions"]


def _int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): an optional sign, decimal digits, within int64."""
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        return None
    value = int(text)
    return value if INT64[0] <= value <= INT64[1] else None


def requirement_matches(requirement: dict[str, Any], labels: dict[str, str]) -> bool:
    key, operator, values = requirement["key"], requirement["operator"], requirement.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator in ("Gt", "Lt"):
        if key not in labels or len(values) != 1:
            return False
        have, wanted = _int64(labels[key]), _int64(values[0])
        if have is None or wanted is None:
            return False
        return have > wanted if operator == "Gt" else have < wanted
    raise AssertionError(f"operator {operator} not modelled")


def node_affinity_scores(pod_object: dict[str, Any], nodes: dict[str, dict[str, str]]) -> dict[str, int]:
    """NodeAffinity's normalised score (0-100) of each node (name -> labels) for *pod_object*."""
    raw = {
        name: sum(
            term["weight"]
            for term in hint_terms(pod_object)
            if term["preference"].get("matchExpressions")
            and all(requirement_matches(r, labels) for r in term["preference"]["matchExpressions"])
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
