"""Placement hints over the room labels: several resources in one term, nodes that do not check a
resource, ratios from annotations, metrics, malformed input."""

from __future__ import annotations

import orjson
import pytest

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.hints import PREFERRED
from limitguard.core.ratios import RATIO_ANNOTATION
from tests.support import container, node, pod, pod_create
from tests.unit.admission.hint_cluster import (
    cluster,
    labels_of,
    limited,
    mutate,
    node_affinity_scores,
    our_expressions,
    relabel,
    settings,
)

GPU = "nvidia.com/gpu"


def both(name: str = "web", cpu: str = "2", memory: str = "4Gi", **extra: str) -> dict:
    limits = {"cpu": cpu, "memory": memory, **extra}
    return pod(name, containers=[container(limits=limits, requests=limits)], phase="Pending")


def test_one_term_requires_room_for_every_limited_ratiod_resource():
    """node-0 lacks cpu, node-1 memory, node-2 both fit: only node-2 is preferred."""
    config = settings(ratios={"cpu": 100, "memory": 100})
    state = cluster(nodes=3, full=())
    state.replace_pods(
        [pod("c", node_name="node-0", cpu="7"), pod("m", node_name="node-1", cpu="1", memory="30Gi")]
    )
    relabel(state, config)
    _, patched = mutate(state, config, both())
    assert our_expressions(patched) == [
        {"key": "limitguard.io/limit-room-cpu", "operator": "Gt", "values": ["1999"]},
        {"key": "limitguard.io/limit-room-memory", "operator": "Gt", "values": ["4095"]},
    ]
    assert node_affinity_scores(patched, labels_of(state)) == {"node-0": 0, "node-1": 0, "node-2": 100}


def test_a_node_that_does_not_check_a_resource_matches_its_requirement():
    """node-1's annotation ratios cpu only: memory is not checked there, so its memory label is the
    int64 maximum and any memory limit fits it, as the binding check says."""
    config = settings(ratios={"cpu": 100, "memory": 100})
    state = cluster(nodes=2, full=(), labelled=False)
    state.upsert_node(node("node-1", annotations={RATIO_ANNOTATION: '{"cpu": 100}'}))
    state.replace_pods([pod("m", node_name="node-1", cpu="1", memory="31Gi")])
    relabel(state, config)
    labels = labels_of(state)
    assert labels["node-1"]["limitguard.io/limit-room-memory"] == str(2**63 - 1)
    _, patched = mutate(state, config, both(memory="8Gi"))
    assert node_affinity_scores(patched, labels) == {"node-0": 100, "node-1": 100}


def test_a_resource_ratiod_only_by_annotations_is_labelled_and_required():
    config = settings(ratios={"cpu": 100})
    state = cluster(nodes=3, full=(), labelled=False)
    state.upsert_node(
        node("node-0", extra={GPU: "4"}, annotations={RATIO_ANNOTATION: '{"nvidia.com/gpu": 100}'})
    )
    state.upsert_node(
        node("node-1", extra={GPU: "4"}, annotations={RATIO_ANNOTATION: '{"nvidia.com/gpu": 50}'})
    )
    relabel(state, config)
    labels = labels_of(state)
    gpu_key = "limitguard.io/limit-room-nvidia.com_gpu"
    # node-0 and node-1 check gpus only (their maps replace the default), node-2 checks cpu only
    assert [labels[f"node-{i}"][gpu_key] for i in range(3)] == ["4", "2", str(2**63 - 1)]
    _, patched = mutate(state, config, both(cpu="1", memory="1Gi", **{GPU: "3"}))
    assert {e["key"] for e in our_expressions(patched)} == {"limitguard.io/limit-room-cpu", gpu_key}
    assert node_affinity_scores(patched, labels) == {"node-0": 100, "node-1": 0, "node-2": 100}


def test_held_bindings_lower_the_label():
    config = settings()
    state = cluster(nodes=2, full=())
    state.ledger.reserve("node-1", "default/held", {"cpu": 9000})
    relabel(state, config)
    assert labels_of(state)["node-1"]["limitguard.io/limit-room-cpu"] == "1000"
    _, patched = mutate(state, config, limited())
    assert node_affinity_scores(patched, labels_of(state)) == {"node-0": 100, "node-1": 0}


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
    assert 'limitguard_placement_hints_total{outcome="given",reason="Gt"} 2.0' in exposed
    assert 'limitguard_placement_hints_total{outcome="skipped",reason="node-name-set"} 1.0' in exposed


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
