"""Placement hints through the mutating webhook: real AdmissionReviews in, JSON patches out (the
term over the room labels, the patch shapes, reinvocation, and when a pod gets a hint)."""

from __future__ import annotations

import copy
import dataclasses
import json

import orjson
import pytest

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.config import Config, Enforcement, HintMode
from limitguard.core.hints import HINT_ANNOTATION, PREFERRED
from tests.support import container, pod, pod_create
from tests.unit.admission.hint_cluster import (
    cluster,
    hint_terms,
    labels_of,
    limited,
    mutate,
    node_affinity_scores,
    our_expressions,
    relabel,
    settings,
)

CPU = "limitguard.io/limit-room-cpu"


# -- the term and the patch shapes -----------------------------------------------------------------
def test_a_pod_without_affinity_gets_one_preferred_gt_term_over_the_room_labels():
    state = cluster()
    answer, patched = mutate(state, settings(), limited())
    assert answer.reason == "placement-hint"
    assert answer.patch.operations()[0]["path"] == "/spec/affinity"
    # 2 cpu = 2000 millicores: a node with exactly 2000 left (label "2000") matches Gt 1999
    assert hint_terms(patched) == [
        {
            "weight": 100,
            "preference": {"matchExpressions": [{"key": CPU, "operator": "Gt", "values": ["1999"]}]},
        }
    ]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in patched["spec"]["affinity"]["nodeAffinity"]
    note = json.loads(patched["metadata"]["annotations"][HINT_ANNOTATION])
    assert set(note) == {"resources", "weight", "term"}  # what the pod carries: no node, no count
    assert (note["resources"], note["weight"]) == (["cpu"], 100)


def test_the_scheduler_would_score_every_node_with_room_100_and_the_others_0():
    state = cluster()
    labels = labels_of(state)
    assert [labels[f"node-{i}"][CPU] for i in range(5)] == ["1000", "1000", "10000", "10000", "10000"]
    _, patched = mutate(state, settings(weight=40), limited())
    scores = node_affinity_scores(patched, labels)
    assert scores == {"node-0": 0, "node-1": 0, "node-2": 100, "node-3": 100, "node-4": 100}


def test_a_node_with_exactly_the_pods_limit_left_is_preferred_and_one_less_is_not():
    state = cluster(nodes=3, full=())
    state.replace_pods(
        [pod("eight", node_name="node-0", cpu="8"), pod("more", node_name="node-1", cpu="8001m")]
    )
    relabel(state, settings())
    _, patched = mutate(state, settings(), limited(cpu="2"))
    scores = node_affinity_scores(patched, labels_of(state))
    assert scores == {"node-0": 100, "node-1": 0, "node-2": 100}  # 2 cpu left fits a 2 cpu limit


def test_the_term_does_not_depend_on_the_nodes():
    """The same pod gets the same patch on a cluster with no room anywhere and one with room
    everywhere: kube-scheduler judges the labels at each attempt."""
    empty, full = cluster(full=()), cluster(full=tuple(f"node-{i}" for i in range(5)))
    assert mutate(empty, settings(), limited())[0].patch == mutate(full, settings(), limited())[0].patch


def test_an_empty_affinity_object_is_added_into_not_replaced():
    state = cluster()
    answer, patched = mutate(state, settings(), limited(affinity={}))
    assert answer.patch.operations()[0]["path"] == "/spec/affinity/nodeAffinity"
    assert our_expressions(patched)[0]["operator"] == "Gt"


def test_only_required_terms_are_kept_and_the_preferred_list_added_beside_them():
    hostname = {"key": "kubernetes.io/hostname", "operator": "Exists"}
    required = {"nodeSelectorTerms": [{"matchExpressions": [hostname]}]}
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


def test_reinvocation_keeps_one_term_and_replaces_it_when_the_limits_changed():
    state = cluster()
    config = settings()
    _, first = mutate(state, config, limited())
    own = {
        "weight": 7,
        "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
    }
    first["spec"]["affinity"]["nodeAffinity"][PREFERRED].insert(0, own)  # a later webhook's
    unchanged, _ = mutate(state, config, copy.deepcopy(first))
    assert unchanged.patch is None  # the same term: nothing to change
    first["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "3"  # a later webhook raised it
    answer, second = mutate(state, config, copy.deepcopy(first))
    assert [op["op"] for op in answer.patch.operations()] == ["replace", "add"]
    terms = hint_terms(second)
    assert terms[0] == own and len(terms) == 2
    assert our_expressions(second) == [{"key": CPU, "operator": "Gt", "values": ["2999"]}]


def test_pods_of_one_limit_share_one_term_and_other_metadata_gets_its_own_paths():
    state = cluster()
    mutator = Mutator(state, settings())

    def hinted(pod_object, metadata=True):
        review = pod_create(pod_object)
        if not metadata:
            review["request"]["object"]["metadata"] = None  # another path for the annotation
        return mutator(decode_review(orjson.dumps(review))).patch

    first, second = hinted(limited("web-1")), hinted(limited("web-2"))
    assert first.operations() == second.operations()
    assert [op["path"] for op in first.operations()] == ["/spec/affinity", "/metadata/annotations"]
    annotated = limited("web-3")
    annotated["metadata"]["annotations"] = {"team": "a"}
    assert [op["path"] for op in hinted(annotated).operations()] == [
        "/spec/affinity",
        "/metadata/annotations/" + HINT_ANNOTATION.replace("/", "~1"),
    ]
    assert [op["path"] for op in hinted(limited("web-4"), metadata=False).operations()] == [
        "/spec/affinity",
        "/metadata",
    ]
    assert len(mutator.hinter._terms) == 1


def test_the_terms_remembered_stay_bounded(monkeypatch):
    from limitguard.admission import hints as hints_module

    monkeypatch.setattr(hints_module, "MAX_REMEMBERED_TERMS", 4)
    mutator = Mutator(cluster(), settings(), defaults=False)
    for millicores in range(1, 40):
        request = decode_review(orjson.dumps(pod_create(limited(cpu=f"{millicores}m"))))
        patched = jsonpatch_apply(limited(cpu=f"{millicores}m"), mutator(request).patch)
        assert our_expressions(patched)[0]["values"] == [str(millicores - 1)]
        assert len(mutator.hinter._terms) <= 4


def jsonpatch_apply(pod_object, patch):
    from tests.unit.admission.hint_cluster import applied

    return applied(pod_object, patch)


def test_defaults_and_hint_in_one_review_count_the_defaulted_limits():
    state = cluster()
    best_effort = pod("be", containers=[container()], phase="Pending")
    config = settings()
    answer, patched = mutate(state, config, best_effort)
    assert answer.reason == "defaulted,placement-hint"
    assert patched["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "500m"
    assert our_expressions(patched) == [{"key": CPU, "operator": "Gt", "values": ["499"]}]
    defaults = Config(
        limit_aware=config.limit_aware,
        best_effort_defaults=type(config.best_effort_defaults)(limits={"cpu": "2", "memory": "1Gi"}),
    )
    answer, patched = mutate(state, defaults, best_effort)
    assert answer.reason == "defaulted,placement-hint"
    assert our_expressions(patched)[0]["values"] == ["1999"]
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
    assert counted == [("given", "Gt") if hinted else ("skipped", skipped)]
    assert (answer.reason == "placement-hint") is hinted


@pytest.mark.parametrize(
    ("state_args", "pod_object", "reason"),
    [
        ({}, limited(nodeName="node-3"), "node-name-set"),
        ({}, limited(namespace_name="kube-system"), "excluded"),
        ({}, limited(schedulerName="my-scheduler"), "other-scheduler"),
        ({}, pod("ds", cpu="2", phase="Pending", owner_kind="DaemonSet"), "daemonset"),
        ({}, pod("free", containers=[container()], phase="Pending"), "no-limits"),
        ({"labelled": False}, limited(), "no-room-labels"),  # no node carries the label yet
        ({}, pod("mem", memory="1Gi", phase="Pending"), "no-room-labels"),  # memory is not ratio'd
        # (2^63 - 1) millicores + 1 needs Gt 2^63 - 1: no int64 value matches the unchecked nodes
        ({}, limited(cpu=f"{2**63}m"), "out-of-range"),
    ],
)
def test_no_hint(state_args, pod_object, reason):
    counted: list[tuple[str, str]] = []
    request = decode_review(orjson.dumps(pod_create(pod_object)))
    answer = Mutator(cluster(**state_args), settings(), defaults=False, count_hint=counted.append)(request)
    assert answer.patch is None
    assert counted == [("skipped", reason)]


def test_the_largest_limit_that_still_has_a_hint_matches_only_unchecked_nodes():
    state = cluster()
    _, patched = mutate(state, settings(), limited(cpu=f"{2**63 - 1}m"))
    assert our_expressions(patched)[0]["values"] == [str(2**63 - 2)]
    assert node_affinity_scores(patched, labels_of(state)) == {f"node-{i}": 0 for i in range(5)}


def test_no_hint_for_a_mirror_pod():
    mirror = limited()
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    counted: list[tuple[str, str]] = []
    request = decode_review(orjson.dumps(pod_create(mirror)))
    assert Mutator(cluster(), settings(), count_hint=counted.append)(request).patch is None
    assert counted == [("skipped", "mirror-pod")]


def test_the_default_scheduler_named_explicitly_still_gets_a_hint():
    _, patched = mutate(cluster(), settings(), limited(schedulerName="default-scheduler"))
    assert our_expressions(patched)[0]["operator"] == "Gt"


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
    assert counted == [("given", "Gt") if hinted else ("skipped", "other-scheduler")]


def test_a_pod_with_a_node_selector_gets_the_same_term():
    """Eligibility is kube-scheduler's Filter: the preference only ranks the nodes that pass it."""
    plain = mutate(cluster(), settings(), limited())[0].patch.operations()
    selected = mutate(cluster(), settings(), limited(nodeSelector={"pool": "a"}))[0].patch.operations()
    assert plain == selected


def test_pods_of_one_shape_share_one_hinted_patch_whatever_their_token_volume():
    """The apiserver names every pod's token volume at random before webhooks see it: what a hint
    reads of a pod leaves it out, so a workload's pods share one patch (the same object)."""
    mutator = Mutator(cluster(), settings(), defaults=False)

    def answer(name, token, **spec):
        pod_object = limited(name, **spec)
        pod_object["spec"]["volumes"] = [{"name": f"kube-api-access-{token}", "projected": {"sources": []}}]
        return mutator(decode_review(orjson.dumps(pod_create(pod_object))))

    first, second = answer("web-1", "abcde"), answer("web-2", "fghij")
    assert first.patch is second.patch and first.reason == "placement-hint"
    other = answer("web-3", "klmno", affinity={"nodeAffinity": {PREFERRED: []}})
    assert other.patch is not first.patch
    assert other.patch.operations()[0]["path"] == "/spec/affinity/nodeAffinity/" + PREFERRED + "/-"
    assert len(mutator.hinter._hints) == 2


def test_a_room_label_key_that_appears_is_seen_by_the_next_pod():
    """The hint's requirements are for the resources some node carries a room label for: once the
    leader labels memory too, the same pod's term asks for memory room as well."""
    state = cluster()
    mutator = Mutator(state, settings(ratios={"cpu": 125, "memory": 100}), defaults=False)
    pod_object = limited("web-1", memory="1Gi")

    def keys():
        patched = jsonpatch_apply(
            pod_object, mutator(decode_review(orjson.dumps(pod_create(pod_object)))).patch
        )
        return [expression["key"] for expression in our_expressions(patched)]

    assert keys() == [CPU]  # the nodes carry only cpu room labels (cluster() labels for cpu: 125)
    relabel(state, settings(ratios={"cpu": 125, "memory": 100}))
    assert keys() == [CPU, "limitguard.io/limit-room-memory"]
