"""Placement hints: hostname labels, the cap, metrics, the remembered nodes, malformed input."""

from __future__ import annotations

import json

import orjson
import pytest

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.hints import HINT_ANNOTATION, HOSTNAME_LABEL, PREFERRED
from tests.support import pod, pod_create
from tests.unit.admission.hint_cluster import (
    cluster,
    labels_of,
    limited,
    mutate,
    node_affinity_scores,
    our_expression,
    settings,
)


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


# -- metrics ---------------------------------------------------------------------------------------
def test_hints_given_and_skipped_are_counted_by_reason_on_every_mutating_route():
    from prometheus_client import generate_latest

    from limitguard.cli.startup import build_services

    services = build_services(settings(), cluster())
    request = decode_review(orjson.dumps(pod_create(limited())))
    bound = decode_review(orjson.dumps(pod_create(limited(nodeName="node-3"))))
    services.handlers["mutate"](request)
    services.handlers["mutate-placement"](request)
    services.handlers["mutate-placement"](bound)
    assert services.handlers["mutate-defaults"](request).patch is None  # defaults only: no hint
    exposed = generate_latest(services.metrics.registry).decode()
    assert 'limitguard_placement_hints_total{outcome="given",reason="NotIn"} 2.0' in exposed
    assert 'limitguard_placement_hints_total{outcome="skipped",reason="node-name-set"} 1.0' in exposed


def test_a_burst_shares_the_remembered_nodes_until_the_table_changes():
    state = cluster()
    mutator = Mutator(state, settings(), defaults=False)
    request = decode_review(orjson.dumps(pod_create(limited())))
    first = mutator(request)
    assert first.patch.operations() == mutator(request).patch.operations()  # remembered: the same
    state.upsert_pod(pod("big-node-2", node_name="node-2", cpu="9"))  # a pod bound: node-2 is full
    (term_op, _) = mutator(request).patch.operations()
    (term,) = term_op["value"]["nodeAffinity"][PREFERRED]
    assert term["preference"]["matchExpressions"][0]["values"] == ["node-3", "node-4"]


def with_token_volume(pod_object: dict, suffix: str) -> dict:
    """*pod_object* as the apiserver's ServiceAccount admission leaves it: a token volume named
    `kube-api-access-` and five random characters, mounted in every container."""
    volume = f"kube-api-access-{suffix}"
    pod_object["spec"]["volumes"] = [
        {"name": volume, "projected": {"sources": [{"serviceAccountToken": {}}]}}
    ]
    for item in pod_object["spec"]["containers"]:
        item["volumeMounts"] = [{"name": volume, "readOnly": True, "mountPath": "/var/run/secrets/x"}]
    return pod_object


def test_pods_of_one_workload_share_the_remembered_hint_whatever_their_token_volume():
    mutator = Mutator(cluster(), settings(), defaults=False)
    answers = [
        mutator(decode_review(orjson.dumps(pod_create(with_token_volume(limited(name), suffix)))))
        for name, suffix in (("web-1", "bhn9b"), ("web-2", "x7k2q"))
    ]
    assert answers[0].patch is answers[1].patch  # one patch, found once
    assert len(mutator.hinter._remembered) == 1
    other_limits = with_token_volume(limited("web-3", cpu="1"), "zz2q4")
    assert mutator(decode_review(orjson.dumps(pod_create(other_limits)))).patch is not answers[0].patch
    assert len(mutator.hinter._remembered) == 2


@pytest.mark.parametrize(
    "affinity",
    [
        "x",
        [1],
        {"nodeAffinity": []},
        {"nodeAffinity": [1]},
        {"nodeAffinity": {PREFERRED: {}}},
        {"nodeAffinity": {PREFERRED: "x"}},
    ],
)
def test_a_malformed_affinity_gets_no_hint_and_is_left_to_the_apiserver(affinity):
    counted: list[tuple[str, str]] = []
    request = decode_review(orjson.dumps(pod_create(limited(affinity=affinity))))
    answer = Mutator(cluster(), settings(), count_hint=counted.append)(request)
    assert answer.allowed and answer.patch is None
    assert counted == [("skipped", "malformed")]
