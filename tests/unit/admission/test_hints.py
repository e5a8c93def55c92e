"""Placement hints through the mutating webhook: real AdmissionReviews in, JSON patches out (the
patch shapes, reinvocation, and when a pod gets a hint)."""

from __future__ import annotations

import copy
import dataclasses
import json

import orjson
import pytest

from limitguard.admission import hints as hints_module
from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.config import Config, Enforcement, HintMode
from limitguard.core.hints import HINT_ANNOTATION, HOSTNAME_LABEL, PREFERRED
from tests.support import container, node, pod, pod_create
from tests.unit.admission.hint_cluster import (
    applied,
    cluster,
    hint_terms,
    labels_of,
    limited,
    mutate,
    node_affinity_scores,
    our_expression,
    settings,
)


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


def test_a_bursts_pods_share_one_patch_until_the_node_table_changes():
    """Pods of one spec and one set of annotations created between two table changes get the same
    patch (encoded once); a pod landing on a node changes the nodes named; other metadata gets its own."""
    state = cluster()
    mutator = Mutator(state, settings())

    def hinted(pod_object, metadata=True):
        review = pod_create(pod_object)
        if not metadata:
            review["request"]["object"]["metadata"] = None  # another path for the annotation
        return mutator(decode_review(orjson.dumps(review))).patch

    first, second = hinted(limited("web-1")), hinted(limited("web-2"))
    assert second is first  # the same JsonPatch: shared, not rebuilt
    assert [op["path"] for op in first.operations()] == ["/spec/affinity", "/metadata/annotations"]
    annotated = limited("web-3")
    annotated["metadata"]["annotations"] = {"team": "a"}
    annotated = hinted(annotated)  # the same spec: ours is added beside their annotations
    assert [op["path"] for op in annotated.operations()] == [
        "/spec/affinity",
        "/metadata/annotations/" + HINT_ANNOTATION.replace("/", "~1"),
    ]
    assert [op["path"] for op in hinted(limited("web-4"), metadata=False).operations()] == [
        "/spec/affinity",
        "/metadata",
    ]
    state.upsert_pod(pod("big-2", node_name="node-2", cpu="9"))  # node-2 is full now
    after = hinted(limited("web-5"))
    assert after is not first
    expression = our_expression(applied(limited("web-5"), after))
    assert (expression["operator"], expression["values"]) == ("In", ["node-3", "node-4"])  # the shorter list


def test_the_remembered_patches_stay_within_their_bytes(monkeypatch):
    """Pods with ever new annotations (a tenant's, or an attacker's) cannot make the remembered
    patches grow past MAX_PATCH_BYTES: past it they are dropped, and every answer stays right."""
    patch_bytes = len(
        Mutator(cluster(), settings())(decode_review(orjson.dumps(pod_create(limited())))).patch.encoded
    )
    monkeypatch.setattr(hints_module, "MAX_PATCH_BYTES", 3 * patch_bytes + 100)
    state = cluster()
    mutator = Mutator(state, settings())
    hinter = mutator.hinter
    for index in range(40):
        pod_object = limited(f"web-{index}")
        pod_object["metadata"]["annotations"] = {"n": str(index % 20)}  # 20 annotation sets, one spec
        answer = mutator(decode_review(orjson.dumps(pod_create(pod_object))))
        assert our_expression(applied(pod_object, answer.patch))["values"] == ["node-0", "node-1"]
        kept = sum(entry.patch_bytes() for entry in hinter._remembered.values())
        assert kept == hinter._patch_bytes <= hints_module.MAX_PATCH_BYTES


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


def test_a_pod_sent_to_limitguards_scheduler_gets_the_swap_and_no_hint():
    """limitguard's scheduler places the pod exactly, so /mutate swaps the scheduler and leaves the
    hint out; /mutate-scheduler only swaps, and the defaults and placement routes never swap."""
    from dataclasses import replace

    from limitguard.core.usescheduler import USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE
    from tests.support import namespace

    state = cluster()
    labels = {"limitguard.io/defaults": "enabled", USE_SCHEDULER_LABEL: USE_SCHEDULER_VALUE}
    state.replace_namespaces([namespace("default", labels=labels)])
    state.mark_synced("namespaces")
    config = replace(settings(), use_scheduler_name="limitguard-scheduler")
    swap = {"op": "add", "path": "/spec/schedulerName", "value": "limitguard-scheduler"}
    answer, patched = mutate(state, config, limited())
    assert answer.patch.operations() == [swap] and "affinity" not in patched["spec"]
    best_effort = pod("be", containers=[container()], phase="Pending")
    answer, patched = mutate(state, config, best_effort)
    assert answer.reason == "defaulted+scheduler-set" and answer.patch.operations()[-1] == swap
    answer, _ = mutate(state, config, best_effort, defaults=False, hints=False)
    assert answer.patch.operations() == [swap]
    answer, patched = mutate(state, config, limited(), defaults=False, scheduler=False)
    assert answer.reason == "placement-hint" and "schedulerName" not in patched["spec"]
    answer, patched = mutate(state, config, best_effort, scheduler=False, hints=False)
    assert answer.reason == "defaulted" and "schedulerName" not in patched["spec"]


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


@pytest.mark.parametrize(
    ("scheduler_names", "scheduler_name", "hinted"),
    [
        ({"default-scheduler"}, "koord-scheduler", False),  # the default list
        ({"default-scheduler", "koord-scheduler"}, "koord-scheduler", True),
        ({"default-scheduler", "koord-scheduler"}, "scheduler-plugins-scheduler", False),
        ({"default-scheduler", "koord-scheduler"}, None, True),  # none named: default-scheduler's
        ({"scheduler-plugins-scheduler"}, "scheduler-plugins-scheduler", True),
        ({"scheduler-plugins-scheduler"}, "default-scheduler", False),
        ({"scheduler-plugins-scheduler"}, "", False),  # counts as default-scheduler, not listed
        ({"default-scheduler"}, ["default-scheduler"], False),  # not a name at all
    ],
)
def test_the_schedulers_whose_pods_get_hints(scheduler_names, scheduler_name, hinted):
    base = settings()
    config = dataclasses.replace(
        base,
        placement_hints=dataclasses.replace(base.placement_hints, scheduler_names=frozenset(scheduler_names)),
    )
    pod_object = limited() if scheduler_name is None else limited(schedulerName=scheduler_name)
    counted: list[tuple[str, str]] = []
    request = decode_review(orjson.dumps(pod_create(pod_object)))
    answer = Mutator(cluster(), config, defaults=False, count_hint=counted.append)(request)
    assert answer.allowed
    assert counted == [("given", "NotIn") if hinted else ("skipped", "other-scheduler")]


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
