"""Shared parts of the records (interned names, one amounts mapping per pod template) change nothing.

Pods of one template share their limit mappings and their namespace and node name strings; these
tests pin that the sharing happens and, above all, that it is invisible: updating or deleting one
pod never changes another pod's record or any node's sums, and a state built incrementally through
any sequence of operations equals one loaded fresh from the objects it ended with.
"""

from __future__ import annotations

import copy

import orjson
from hypothesis import given
from hypothesis import strategies as st

from limitguard.core.podrules import DEFAULT_RULES
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.records import PodRecord, pod_record
from limitguard.state.sharing import Interner
from limitguard.state.store import ClusterState
from tests.support import container, namespace, node, pod
from tests.unit.state.random_clusters import OPERATIONS, PROPERTY_SETTINGS, apply


def parsed(obj: dict) -> dict:
    """*obj* as a parser hands it over: every string a new object, nothing shared with the test."""
    return orjson.loads(orjson.dumps(obj))


def template_pod(name: str, node_name: str | None = "n1", **fields) -> dict:
    containers = [container(limits={"cpu": "1", "memory": "1Gi"}, requests={"cpu": "500m"})]
    return parsed(pod(name, namespace="team", node_name=node_name, containers=containers, **fields))


def sums(state: ClusterState, nodes: list[str]) -> dict:
    """Every per-node sum, zero entries left out (a pod that leaves leaves a zero behind)."""

    def nonzero(amounts) -> dict:
        return {resource: amount for resource, amount in amounts.items() if amount}

    return {
        name: (
            nonzero(state.committed(name)),
            nonzero(state.requested(name)),
            nonzero(state.scoring_allocated(name)),
            state.terminating_pods(name),
            state.nominated_pods(name),
        )
        for name in nodes
    }


def test_pods_of_one_template_share_their_mappings_and_names():
    state = ClusterState()
    state.upsert_node(parsed(node("n1")))
    a, b = (state.upsert_pod(template_pod(name)) for name in ("a", "b"))

    assert a.limits == b.limits == {"cpu": 1000, "memory": 1024**3}
    assert a.limits is b.limits and a.requests is b.requests and a.amounts is b.amounts
    assert a.namespace is b.namespace and a.node_name is b.node_name
    assert a.node_name is state.node("n1").name  # one string for the node wherever it is named
    assert (a.name, b.name, a.key) == ("a", "b", "team/a")


def test_updating_or_deleting_one_pod_of_a_template_leaves_the_others_alone():
    state = ClusterState()
    state.upsert_node(parsed(node("n1")))
    others = [state.upsert_pod(template_pod(name)) for name in ("a", "b", "c")]
    before = [copy.deepcopy(record) for record in others]

    resized = parsed(pod("a", namespace="team", node_name="n1", cpu="3", memory="1Gi"))
    state.upsert_pod(resized)  # a changes its limits: b's and c's shared mapping must not
    state.upsert_pod(template_pod("b", phase="Succeeded"))  # b stops counting
    state.delete_pod(template_pod("c"))

    assert others == before  # the records handed out earlier are unchanged
    assert state.pod("team", "a").limits == {"cpu": 3000, "memory": 1024**3}
    assert state.pod("team", "b").limits == {"cpu": 1000, "memory": 1024**3}
    assert not state.pod("team", "b").active and state.pod("team", "c") is None
    assert state.committed("n1") == {"cpu": 3000, "memory": 1024**3}
    assert template_pod("a")["spec"] == template_pod("b")["spec"]  # the template itself is intact
    assert pod_record(template_pod("d"), DEFAULT_RULES).limits == {"cpu": 1000, "memory": 1024**3}


def test_flags_round_trip_through_the_record():
    record = pod_record(parsed(pod("x", node_name="n1", cpu="1", owner_kind="DaemonSet")), DEFAULT_RULES)
    assert (record.active, record.terminating, record.daemonset, record.mirror) == (True, False, True, False)
    terminal = parsed(pod("y", node_name="n1", cpu="1", phase="Failed"))
    terminal["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    terminal["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "h"}
    record = pod_record(terminal, DEFAULT_RULES)
    assert (record.active, record.terminating, record.daemonset, record.mirror) == (False, True, False, True)
    assert record.counted_node == "" and record.controller is None


FEED_OPERATIONS = OPERATIONS.filter(lambda operation: operation[0] not in ("reserve", "release"))  # no ledger


@PROPERTY_SETTINGS
@given(operations=st.lists(FEED_OPERATIONS, min_size=1, max_size=40))
def test_any_sequence_of_updates_equals_a_fresh_load_of_what_is_left(operations, tmp_path_factory):
    state = ClusterState()
    latest: dict[str, dict] = {"nodes": {}, "pods": {}}  # what the feed last said per key
    handed_out: list[tuple[PodRecord, PodRecord]] = []  # each record seen, and a deep copy of it
    for operation in operations:
        if operation[0] in ("node", "pod"):
            obj = parsed(operation[1])  # fresh strings, as a watch event brings them
            kind = operation[0] + "s"
            latest[kind][state.upsert(kind, obj)] = obj
            if kind == "pods":
                held = state.pod("default", obj["metadata"]["name"])
                handed_out.append((held, copy.deepcopy(held)))
        else:
            apply(state, operation)
            if operation[0] == "delete-node":
                latest["nodes"].pop(operation[1], None)
            elif operation[0] == "delete-pod":
                latest["pods"].pop(f"default/{operation[1]}", None)
        # no update to one pod ever reaches into a record handed out for another (or the same) pod
        assert all(record == snapshot for record, snapshot in handed_out)

    path = tmp_path_factory.mktemp("fresh") / "cluster.json"
    items = [namespace("default"), *latest["nodes"].values(), *latest["pods"].values()]
    path.write_bytes(orjson.dumps({"kind": "List", "items": [parsed(item) for item in items]}))
    fresh = ClusterState()
    load_cluster_file(fresh, path)

    assert list(state.pods()) == [fresh.pod(p.namespace, p.name) for p in state.pods()]
    assert {p.key for p in state.pods()} == {p.key for p in fresh.pods()}
    assert {n.name for n in state.nodes()} == {n.name for n in fresh.nodes()}
    assert all(state.node(n.name) == n for n in fresh.nodes())
    named = {n.name for n in state.nodes()} | {p.node_name for p in state.pods()}
    touched = sorted(named | {p.nominated_node for p in state.pods()})
    assert sums(state, touched) == sums(fresh, touched)


def test_loading_a_file_again_keeps_exactly_its_objects(tmp_path):
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_bytes(
        orjson.dumps(
            {"kind": "List", "items": [node("n1"), node("n2"), template_pod("a"), template_pod("b", "n2")]}
        )
    )
    second.write_bytes(orjson.dumps({"kind": "List", "items": [node("n2"), template_pod("b", "n2")]}))
    state = ClusterState()
    assert load_cluster_file(state, first) == {"nodes": 2, "pods": 2, "namespaces": 0}

    assert load_cluster_file(state, second) == {"nodes": 1, "pods": 1, "namespaces": 0}
    fresh = ClusterState()
    load_cluster_file(fresh, second)
    assert [p.key for p in state.pods()] == ["team/b"] and state.node("n1") is None
    assert list(state.pods()) == list(fresh.pods())
    assert sums(state, ["n1", "n2"]) == sums(fresh, ["n1", "n2"])


def test_the_interner_shares_equal_values_and_forgets_unused_ones():
    names: Interner[str] = Interner(floor=2)
    kept = names("".join(["node-", "1"]))  # built at run time: not a constant the compiler shares
    assert names("".join(["node-", "1"])) is kept  # an equal value comes back as the shared one
    for index in range(8):  # values no one keeps: the table outgrows its limit and prunes them
        names(f"gone-{index}")
    assert len(names) <= 4
    assert names("".join(["node-", "1"])) is kept  # still in use, so still shared
