"""Placement hints through the mutating webhook: real AdmissionReviews in, JSON patches out.

`node_affinity_scores` models how kube-scheduler's NodeAffinity plugin scores the result
(kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, Score and
NormalizeScore, read at commit 00d375050338, the newest stored): a node's score is the sum of the
weights of the preferred terms it matches, normalised by helper.DefaultNormalizeScore to
100 x score / highest score (all 0 when the highest is 0). A requirement is a label selector
(k8s.io/component-helpers nodeaffinity): `NotIn` matches a node without the label.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import orjson
import pytest
from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.config import Config, Enforcement, HintMode, LimitAwareConfig, PlacementHints
from limitguard.core.defaults import OPT_IN_LABEL, OPT_IN_VALUE
from limitguard.core.hints import HINT_ANNOTATION, HOSTNAME_LABEL, PREFERRED
from limitguard.state.store import ClusterState

from tests.support import LEDGER_NEVER_EXPIRES, container, namespace, node, pod, pod_create

FULL = ("node-0", "node-1")  # 8 cpu x 125% = 10 cpu of limit capacity, 9 of it taken


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
    if answer.patch is None:
        return answer, pod_object
    return answer, jsonpatch.apply_patch(pod_object, answer.patch.operations())


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


# -- the patch shapes -------------------------------------------------------------------------------
def test_a_pod_without_affinity_gets_one_preferred_term_naming_the_nodes_without_room():
    state = cluster()
    answer, patched = mutate(state, settings(), limited())
    assert answer.reason == "placement-hint"
    assert answer.patch.operations()[0]["path"] == "/spec/affinity"
    assert hint_terms(patched) == [
        {
            "weight": 100,
            "preference": {
                "matchExpressions": [
                    {"key": HOSTNAME_LABEL, "operator": "NotIn", "values": ["node-0", "node-1"]}
                ]
            },
        }
    ]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in patched["spec"]["affinity"]["nodeAffinity"]
    note = json.loads(patched["metadata"]["annotations"][HINT_ANNOTATION])
    assert (note["operator"], note["named"], note["fit"], note["eligible"], note["capped"]) == (
        "NotIn",
        2,
        3,
        5,
        False,
    )


def test_the_scheduler_would_score_every_node_with_room_100_and_the_others_0():
    state = cluster()
    _, patched = mutate(state, settings(weight=40), limited())
    scores = node_affinity_scores(patched, labels_of(state))
    assert scores == {"node-0": 0, "node-1": 0, "node-2": 100, "node-3": 100, "node-4": 100}


def test_an_empty_affinity_object_is_added_into_not_replaced():
    state = cluster()
    answer, patched = mutate(state, settings(), limited(affinity={}))
    assert answer.patch.operations()[0]["path"] == "/spec/affinity/nodeAffinity"
    assert our_expression(patched)["operator"] == "NotIn"


def test_only_required_terms_are_kept_and_the_preferred_list_added_beside_them():
    required = {"nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "Exists"}]}]}
    state = cluster()
    answer, patched = mutate(
        state,
        settings(),
        limited(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}),
    )
    assert answer.patch.operations()[0]["path"] == f"/spec/affinity/nodeAffinity/{PREFERRED}"
    assert (
        patched["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        == required
    )
    assert len(hint_terms(patched)) == 1


def test_the_pods_own_preferred_terms_are_kept_and_ours_appended():
    own = {
        "weight": 7,
        "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
    }
    state = cluster()
    answer, patched = mutate(state, settings(), limited(affinity={"nodeAffinity": {PREFERRED: [own]}}))
    assert answer.patch.operations()[0]["path"] == f"/spec/affinity/nodeAffinity/{PREFERRED}/-"
    assert hint_terms(patched)[0] == own and len(hint_terms(patched)) == 2


def test_reinvocation_replaces_our_term_and_never_adds_a_second():
    state = cluster()
    config = settings()
    _, first = mutate(state, config, limited())
    own = {
        "weight": 7,
        "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
    }
    first["spec"]["affinity"]["nodeAffinity"][PREFERRED].insert(0, own)  # a later webhook's
    unchanged, _ = mutate(state, config, copy.deepcopy(first))
    assert unchanged.patch is None  # the same nodes lack room: nothing to change
    state.upsert_pod(pod("big-node-2", node_name="node-2", cpu="9"))  # node-2 fills up
    answer, second = mutate(state, config, copy.deepcopy(first))
    assert [op["op"] for op in answer.patch.operations()] == ["replace", "add"]
    terms = hint_terms(second)
    assert terms[0] == own and len(terms) == 2
    assert our_expression(second)["values"] == ["node-3", "node-4"]  # In the two with room now
    assert json.loads(second["metadata"]["annotations"][HINT_ANNOTATION])["fit"] == 2


def test_defaults_and_hint_in_one_review_count_the_defaulted_limits():
    state = cluster()
    best_effort = pod("be", containers=[container()], phase="Pending")
    config = settings()
    answer, patched = mutate(state, config, best_effort)
    assert answer.reason == "defaulted"
    assert patched["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "500m"
    # 500m fits the full nodes (1 cpu left): every node fits, so no hint
    assert "affinity" not in patched["spec"]
    defaults = Config(
        limit_aware=config.limit_aware,
        best_effort_defaults=type(config.best_effort_defaults)(limits={"cpu": "2", "memory": "1Gi"}),
    )
    answer, patched = mutate(state, defaults, best_effort)
    assert answer.reason == "defaulted,placement-hint"
    assert our_expression(patched)["values"] == ["node-0", "node-1"]
    assert patched["metadata"]["annotations"]["limitguard.io/defaulted"] == "cpu,memory"


def test_the_one_part_routes_do_only_their_part():
    state = cluster()
    best_effort = pod("be", containers=[container()], phase="Pending")
    answer, _ = mutate(state, settings(), limited(), defaults=False)
    assert answer.reason == "placement-hint"
    answer, patched = mutate(state, settings(), best_effort, hints=False)
    assert answer.reason == "defaulted" and "affinity" not in patched["spec"]


# -- when -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "enforcement", "per_namespace", "hinted"),
    [
        (HintMode.AUTO, Enforcement.DENY, {}, True),
        (HintMode.AUTO, Enforcement.WARN, {}, False),
        (HintMode.AUTO, Enforcement.DRY_RUN, {}, False),
        (HintMode.AUTO, Enforcement.WARN, {"team-a": Enforcement.DENY}, True),
        (HintMode.AUTO, Enforcement.DENY, {"team-a": Enforcement.WARN}, False),
        (HintMode.AUTO, Enforcement.DENY, {"team-a": Enforcement.DRY_RUN}, False),
        (HintMode.ALWAYS, Enforcement.DENY, {}, True),
        (HintMode.ALWAYS, Enforcement.WARN, {}, True),
        (HintMode.ALWAYS, Enforcement.DRY_RUN, {"team-a": Enforcement.DRY_RUN}, True),
        (HintMode.NEVER, Enforcement.DENY, {}, False),
        (HintMode.NEVER, Enforcement.WARN, {"team-a": Enforcement.DENY}, False),
    ],
)
def test_the_mode_under_each_enforcement(mode, enforcement, per_namespace, hinted):
    counted: list[tuple[str, str]] = []
    config = settings(mode, enforcement, per_namespace)
    request = decode_review(orjson.dumps(pod_create(limited(namespace_name="team-a"))))
    answer = Mutator(cluster(), config, count_hint=counted.append)(request)
    skipped = "disabled" if mode is HintMode.NEVER else "not-enforced"
    assert counted == [("given", "NotIn") if hinted else ("skipped", skipped)]
    assert (answer.reason == "placement-hint") is hinted


@pytest.mark.parametrize(
    ("state_args", "pod_object", "reason"),
    [
        ({"full": ()}, limited(), "all-fit"),
        ({"full": tuple(f"node-{i}" for i in range(5))}, limited(), "none-fit"),
        ({}, limited(nodeName="node-3"), "node-name-set"),
        ({}, limited(namespace_name="kube-system"), "excluded"),
        ({}, limited(schedulerName="my-scheduler"), "other-scheduler"),
        ({}, pod("ds", cpu="2", phase="Pending", owner_kind="DaemonSet"), "daemonset"),
        ({}, limited(), "no-limits"),
    ],
)
def test_no_hint(state_args, pod_object, reason):
    counted: list[tuple[str, str]] = []
    if reason == "no-limits":
        pod_object = pod("free", containers=[container()], phase="Pending")
    request = decode_review(orjson.dumps(pod_create(pod_object)))
    answer = Mutator(cluster(**state_args), settings(), defaults=False, count_hint=counted.append)(request)
    assert answer.patch is None
    assert counted == [("skipped", reason)]


def test_no_hint_for_a_mirror_pod():
    mirror = limited()
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    counted: list[tuple[str, str]] = []
    request = decode_review(orjson.dumps(pod_create(mirror)))
    assert Mutator(cluster(), settings(), count_hint=counted.append)(request).patch is None
    assert counted == [("skipped", "mirror-pod")]


def test_the_default_scheduler_named_explicitly_still_gets_a_hint():
    _, patched = mutate(cluster(), settings(), limited(schedulerName="default-scheduler"))
    assert our_expression(patched)["operator"] == "NotIn"


def test_eligibility_narrows_the_nodes_considered():
    # Only node-0 (full) and node-2 are eligible through the nodeSelector: one each, so In.
    state = cluster()
    for name in ("node-0", "node-2"):
        labelled = node(name)
        labelled["metadata"]["labels"]["pool"] = "a"
        state.upsert_node(labelled)
    _, patched = mutate(state, settings(), limited(nodeSelector={"pool": "a"}))
    assert our_expression(patched) == {"key": HOSTNAME_LABEL, "operator": "In", "values": ["node-2"]}
    assert json.loads(patched["metadata"]["annotations"][HINT_ANNOTATION])["eligible"] == 2


# -- hostname labels ------------------------------------------------------------------------------
def test_nodes_are_named_by_their_hostname_label_not_their_name():
    state = cluster(hostnames={"node-0": "ip-10-0-0-1", "node-1": "ip-10-0-0-2"})
    _, patched = mutate(state, settings(), limited())
    assert our_expression(patched)["values"] == ["ip-10-0-0-1", "ip-10-0-0-2"]
    scores = node_affinity_scores(patched, labels_of(state))
    assert scores == {"node-0": 0, "node-1": 0, "node-2": 100, "node-3": 100, "node-4": 100}


def test_a_full_node_without_the_label_turns_not_in_into_in():
    state = cluster(hostnames={"node-0": None})
    _, patched = mutate(state, settings(), limited())
    assert our_expression(patched) == {
        "key": HOSTNAME_LABEL,
        "operator": "In",
        "values": ["node-2", "node-3", "node-4"],
    }
    assert node_affinity_scores(patched, labels_of(state))["node-0"] == 0


def test_a_value_shared_with_a_full_node_is_never_favoured():
    # node-1 (full) and node-2 (room) both say "shared": it is named NotIn, node-2 loses its favour
    state = cluster(nodes=6, hostnames={"node-1": "shared", "node-2": "shared"})
    _, patched = mutate(state, settings(), limited())
    assert our_expression(patched) == {
        "key": HOSTNAME_LABEL,
        "operator": "NotIn",
        "values": ["node-0", "shared"],
    }
    scores = node_affinity_scores(patched, labels_of(state))
    assert scores == {"node-0": 0, "node-1": 0, "node-2": 0, "node-3": 100, "node-4": 100, "node-5": 100}


def test_no_fitting_node_with_a_label_of_its_own_means_no_hint():
    counted: list[tuple[str, str]] = []
    state = cluster(nodes=3, full=("node-0",), hostnames={"node-1": None, "node-2": None})
    request = decode_review(orjson.dumps(pod_create(limited())))
    assert Mutator(state, settings(), count_hint=counted.append)(request).patch is None
    assert counted == [("skipped", "no-hostname-label")]


# -- the cap --------------------------------------------------------------------------------------
def test_past_max_nodes_the_term_is_in_the_fitting_nodes_with_the_most_room():
    state = cluster(nodes=8, full=("node-0", "node-1", "node-2", "node-3"))
    # room after a 2-cpu pod, of 10: node-4 8/10, node-5 5/10, node-6 7/10, node-7 3/10
    state.replace_pods(
        [pod(f"big-node-{i}", node_name=f"node-{i}", cpu="9") for i in range(4)]
        + [
            pod("p5", node_name="node-5", cpu="3"),
            pod("p6", node_name="node-6", cpu="1"),
            pod("p7", node_name="node-7", cpu="5"),
        ]
    )
    _, patched = mutate(state, settings(max_nodes=2), limited())
    assert our_expression(patched) == {
        "key": HOSTNAME_LABEL,
        "operator": "In",
        "values": ["node-4", "node-6"],
    }
    note = json.loads(patched["metadata"]["annotations"][HINT_ANNOTATION])
    assert (note["named"], note["fit"], note["eligible"], note["capped"]) == (2, 4, 8, True)
    scores = node_affinity_scores(patched, labels_of(state))
    assert [name for name, score in sorted(scores.items()) if score == 100] == ["node-4", "node-6"]


def test_within_max_nodes_every_fitting_node_is_named():
    state = cluster(nodes=8, full=("node-0", "node-1", "node-2", "node-3", "node-4"))
    _, patched = mutate(state, settings(max_nodes=3), limited())
    assert our_expression(patched) == {
        "key": HOSTNAME_LABEL,
        "operator": "In",
        "values": ["node-5", "node-6", "node-7"],
    }
