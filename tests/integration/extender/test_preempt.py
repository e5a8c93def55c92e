"""The preempt verb over limitguard's real TLS server: ExtenderPreemptionArgs in both forms, answered
as kube-scheduler reads an ExtenderPreemptionResult (pkg/scheduler/extender.go convertToVictims,
framework/preemption callExtenders)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from limitguard.core.config import Config, Enforcement, LimitAwareConfig, NotReadyPolicy
from limitguard.extender.preempt import Preemption
from limitguard.state.store import ClusterState
from tests.integration.extender.shapes import scheduler_pod
from tests.support import namespace, node, pod

CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 125}))
# n1: 8 cpu at 125% = capacity 10, holding a (6), b (3), c (1): full. n2: the same, plus d (1) of
# its own. The preemptor (scheduler_pod) has a cpu limit of 4 and priority 100.
PODS = {"a": ("n1", "6"), "b": ("n1", "3"), "c": ("n1", "1"), "d": ("n2", "1"), "e": ("n2", "6")}


def uid(name: str) -> str:
    return f"uid-{name}"


def victim_pod(name: str) -> dict[str, Any]:
    node_name, cpu = PODS[name]
    return pod(name, node_name=node_name, cpu=cpu, uid=uid(name), priority=0)


def cluster() -> ClusterState:
    state = ClusterState()
    state.replace_namespaces([namespace("default"), namespace("team")])
    state.replace_nodes([node("n1"), node("n2")])
    state.replace_pods([victim_pod(name) for name in PODS])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


def preemptor(**changes: Any) -> dict[str, Any]:
    body = scheduler_pod()
    body["spec"]["priority"] = 100
    body["spec"].update(changes)
    return body


def meta_args(victims: dict[str, list[str] | None], pdb: int = 0, **pod_changes: Any) -> dict[str, Any]:
    """As kube-scheduler sends a nodeCacheCapable extender: Go field names, the other map null."""
    meta = {
        node_name: None
        if names is None
        else {"Pods": [{"UID": uid(n)} for n in names], "NumPDBViolations": pdb}
        for node_name, names in victims.items()
    }
    return {"Pod": preemptor(**pod_changes), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}


def full_args(victims: dict[str, list[str]], pdb: int = 0) -> dict[str, Any]:
    """As kube-scheduler sends an extender without nodeCacheCapable: whole victim pods."""
    whole = {
        node_name: {"Pods": [victim_pod(n) for n in names], "NumPDBViolations": pdb}
        for node_name, names in victims.items()
    }
    return {"Pod": preemptor(), "NodeNameToVictims": whole, "NodeNameToMetaVictims": None}


def kept(answer: dict[str, Any]) -> dict[str, list[str]]:
    """What kube-scheduler takes from the answer: node -> victim UIDs (encoding/json, any casing)."""
    (victims,) = [value for key, value in answer.items() if key.lower() == "nodenametometavictims"]
    return {node_name: [p["uid"] for p in found["pods"]] for node_name, found in victims.items()}


def _uid_of(pod_or_meta: dict[str, Any]) -> str:
    lowered = {key.lower(): value for key, value in pod_or_meta.items()}
    return lowered["uid"] if "uid" in lowered else lowered["metadata"]["uid"]


def as_scheduler_reads(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, list[str]]:
    """convertToVictims and callExtenders' check for a non-ignorable extender: every node answered
    has at least one victim, and each UID is a pod kube-scheduler proposed on that node."""
    proposed: dict[str, set[str]] = {}
    for key, victims in request.items():
        if key.lower() not in ("nodenametometavictims", "nodenametovictims"):
            continue
        for node_name, found in (victims or {}).items():
            pods = next((v for k, v in (found or {}).items() if k.lower() == "pods"), None) or []
            proposed[node_name] = {_uid_of(p) for p in pods}
    result = kept(answer)
    for node_name, uids in result.items():
        assert uids, f"expected at least one victim pod on node {node_name!r}"
        assert set(uids) <= proposed.get(node_name, set()), f"an unknown UID on {node_name!r}"
    return result


# -- the rules, in both forms --------------------------------------------------------------------
@pytest.mark.parametrize("form", [meta_args, full_args], ids=["NodeNameToMetaVictims", "NodeNameToVictims"])
async def test_a_node_is_kept_only_where_its_victims_free_the_limits(start_extender, form):
    server = await start_extender(cluster(), CONFIG)
    # n1: evicting c leaves 9 + 4 > 10; evicting b and c leaves 6 + 4 = 10 (equality fits).
    request = form({"n1": ["c"]})
    status, answer = await server.post("/extender/preempt", request)
    assert status == 200 and as_scheduler_reads(request, answer) == {}
    request = form({"n1": ["b", "c"], "n2": ["d"]}, pdb=1)
    status, answer = await server.post("/extender/preempt", request)
    # n2 holds d (1) and e (6): evicting d leaves 6 + 4 = 10.
    assert as_scheduler_reads(request, answer) == {"n1": [uid("b"), uid("c")], "n2": [uid("d")]}
    assert {found["numPDBViolations"] for found in answer["nodeNameToMetaVictims"].values()} == {1}


@pytest.mark.parametrize(
    "keys",
    [
        ("NodeNameToMetaVictims", "Pods", "UID", "NumPDBViolations"),
        ("nodeNameToMetaVictims", "pods", "uid", "numPDBViolations"),  # the old tagged types
        ("NODENAMETOMETAVICTIMS", "PODS", "Uid", "numpdbviolations"),
    ],
)
async def test_field_names_in_any_casing(start_extender, keys):
    outer, pods_key, uid_key, pdb_key = keys
    server = await start_extender(cluster(), CONFIG)
    request = {
        "pod": preemptor(),
        outer: {"n1": {pods_key: [{uid_key: uid("a")}], pdb_key: 2}, "n2": {pods_key: [{uid_key: uid("d")}]}},
    }
    status, answer = await server.post("/extender/preempt", request)
    assert status == 200
    assert as_scheduler_reads(request, answer) == {
        "n1": [uid("a")],
        "n2": [uid("d")],
    }
    assert answer["nodeNameToMetaVictims"]["n1"]["numPDBViolations"] == 2
    assert answer["nodeNameToMetaVictims"]["n2"]["numPDBViolations"] == 0


async def test_whole_pods_in_any_casing_are_answered_by_uid(start_extender):
    server = await start_extender(cluster(), CONFIG)
    shouting = victim_pod("a")
    shouting["Metadata"] = shouting.pop("metadata")
    request = {"pod": preemptor(), "nodenametovictims": {"n1": {"pods": [shouting]}}}
    _, answer = await server.post("/extender/preempt", request)
    assert kept(answer) == {"n1": [uid("a")]}


async def test_never_a_node_without_victims(start_extender):
    server = await start_extender(cluster(), CONFIG)
    for victims in ({"n1": []}, {"n1": None}, {"ghost": []}):
        request = meta_args(victims)
        status, answer = await server.post("/extender/preempt", request)
        assert status == 200 and as_scheduler_reads(request, answer) == {}
        # also when limitguard passes the pod through unjudged
        request = meta_args(victims) | {"Pod": scheduler_pod(owner_kind="DaemonSet")}
        _, answer = await server.post("/extender/preempt", request)
        assert kept(answer) == {}


async def test_what_limitguard_does_not_know_is_passed_as_proposed(start_extender):
    server = await start_extender(cluster(), CONFIG)
    request = meta_args({"ghost": ["a"], "n1": ["c"]})
    request["NodeNameToMetaVictims"]["n2"] = {"Pods": [{"UID": "uid-unknown"}], "NumPDBViolations": 0}
    _, answer = await server.post("/extender/preempt", request)
    assert as_scheduler_reads(request, answer) == {
        "ghost": [uid("a")],
        "n2": ["uid-unknown"],
    }  # n1 was judged: evicting c alone frees too little
    # A victim the cache shows on another node than the one kube-scheduler proposes it on: the
    # caches disagree, so n1 is not judged (subtracting d, which n2 counts, would mislead).
    request = meta_args({"n1": ["d"], "n2": ["d"]})
    _, answer = await server.post("/extender/preempt", request)
    assert as_scheduler_reads(request, answer) == {"n1": [uid("d")], "n2": [uid("d")]}
    _, text = await server.get("/metrics")
    assert 'limitguard_extender_requests_total{outcome="checked",verb="preempt"} 2.0' in text
    assert "limitguard_extender_unknown_nodes_total 3.0" in text
    assert "limitguard_extender_filtered_nodes_total 1.0" in text


def unlimited() -> dict[str, Any]:
    body = scheduler_pod()
    body["spec"]["containers"][0]["resources"] = {}
    return body


@pytest.mark.parametrize(
    ("config", "pod_changes", "preemptor_body", "outcome"),
    [
        (CONFIG, {}, scheduler_pod(owner_kind="DaemonSet"), "exempt"),
        (CONFIG, {}, unlimited(), "no-limits"),
        (
            Config(limit_aware=LimitAwareConfig({"cpu": 125}, enforcement=Enforcement.WARN)),
            {},
            None,
            "not-enforced",
        ),
        (
            Config(limit_aware=CONFIG.limit_aware, excluded_namespaces=frozenset({"default"})),
            {},
            None,
            "excluded",
        ),
    ],
)
async def test_pods_admission_would_not_judge_are_passed_as_proposed(
    start_extender, config, pod_changes, preemptor_body, outcome
):
    server = await start_extender(cluster(), config)
    request = meta_args({"n1": ["c"], "n2": []}, **pod_changes)
    if preemptor_body is not None:
        request["Pod"] = preemptor_body
    _, answer = await server.post("/extender/preempt", request)
    assert as_scheduler_reads(request, answer) == {"n1": [uid("c")]}
    _, text = await server.get("/metrics")
    assert f'limitguard_extender_requests_total{{outcome="{outcome}",verb="preempt"}} 1.0' in text


async def test_an_unsynced_state_passes_victims_as_proposed(start_extender):
    state = cluster()
    state.mark_synced("pods", False)
    server = await start_extender(
        state, Config(limit_aware=CONFIG.limit_aware, while_not_ready=NotReadyPolicy.DENY)
    )
    request = meta_args({"n1": ["c"]})
    _, answer = await server.post("/extender/preempt", request)
    assert kept(answer) == {"n1": [uid("c")]}


# -- the same counting as the binding check ------------------------------------------------------
async def test_room_held_for_nominated_pods_of_equal_or_higher_priority_counts(start_extender):
    state = cluster()
    waiting = pod("waiting", cpu="2", phase="Pending", priority=100)
    waiting["status"]["nominatedNodeName"] = "n1"
    state.upsert_pod(waiting)
    server = await start_extender(state, CONFIG)
    request = meta_args({"n1": ["b", "c"]})  # 10 - 4 + 2 held + 4 > 10
    _, answer = await server.post("/extender/preempt", request)
    assert kept(answer) == {}
    request = meta_args({"n1": ["b", "c"]}, priority=200)  # a pod of lower priority holds nothing
    _, answer = await server.post("/extender/preempt", request)
    assert kept(answer) == {"n1": [uid("b"), uid("c")]}


async def test_the_ledger_counts_and_a_finished_victim_frees_nothing(start_extender):
    state = cluster()
    state.ledger.reserve("n2", "team/approved", {"cpu": 1000})  # a binding approved, not yet seen bound
    done = victim_pod("d")
    done["status"]["phase"] = "Succeeded"  # counted nowhere: evicting it frees nothing
    state.upsert_pod(done)
    server = await start_extender(state, CONFIG)
    _, answer = await server.post("/extender/preempt", meta_args({"n2": ["e"]}))  # 6 + 1 ledger - 6 + 4
    assert kept(answer) == {"n2": [uid("e")]}
    _, answer = await server.post("/extender/preempt", meta_args({"n2": ["d"]}))
    assert kept(answer) == {}


async def test_a_victim_listed_twice_is_subtracted_once(start_extender):
    server = await start_extender(cluster(), CONFIG)
    request = meta_args({"n1": ["c", "c", "c", "c"]})
    _, answer = await server.post("/extender/preempt", request)
    assert kept(answer) == {}


# -- transport -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{nope", "not valid JSON"),
        (b"[]", "must be a JSON object"),
        (orjson.dumps({"NodeNameToMetaVictims": {}}), "pod must be a Pod object"),
        (orjson.dumps({"Pod": {}, "NodeNameToMetaVictims": []}), "object keyed by node name"),
        (orjson.dumps({"Pod": {}, "NodeNameToMetaVictims": {"n1": []}}), "an object with Pods"),
        (orjson.dumps({"Pod": {}, "NodeNameToMetaVictims": {"n1": {"Pods": {}}}}), "Pods must be a list"),
        (orjson.dumps({"Pod": {}, "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": 7}]}}}), "UID must be"),
        (orjson.dumps({"Pod": {}, "NodeNameToMetaVictims": {"n1": {"NumPDBViolations": "1"}}}), "integer"),
        (
            orjson.dumps({"Pod": {}, "NodeNameToVictims": {"n1": {"Pods": [{"metadata": {}}]}}}),
            "metadata.uid",
        ),
    ],
)
async def test_malformed_bodies_get_a_clear_400(start_extender, body, message):
    server = await start_extender(cluster(), CONFIG)
    status, answer = await server.post(
        "/extender/preempt", body, headers={"Content-Type": "application/json"}
    )
    assert status == 400 and message in answer["error"]


async def test_the_body_is_bounded(start_extender):
    server = await start_extender(cluster(), CONFIG, max_body_bytes=2048)
    request = meta_args({f"node-{i}": ["a"] for i in range(100)})
    status, answer = await server.post("/extender/preempt", request)
    assert status == 413 and "2048" in answer["error"]


async def test_a_bug_answers_every_proposed_node(start_extender, monkeypatch):
    def broken(self: Preemption, args: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(Preemption, "preempt", broken)
    server = await start_extender(cluster(), CONFIG)
    request = meta_args({"n1": ["c"], "n2": []})
    status, answer = await server.post("/extender/preempt", copy.deepcopy(request))
    assert status == 200 and as_scheduler_reads(request, answer) == {"n1": [uid("c")]}
    _, text = await server.get("/metrics")
    assert 'limitguard_extender_requests_total{outcome="internal-error",verb="preempt"} 1.0' in text
