"""The extender protocol: ExtenderArgs in both forms, over limitguard's real TLS server."""

import re

import orjson
import pytest

from limitguard.cli.configfile import load_config
from limitguard.core.config import Config, Enforcement, LimitAwareConfig, NotReadyPolicy
from limitguard.extender import namelists
from limitguard.extender.namelists import NameLists
from limitguard.extender.protocol import ExtenderProtocolError, decode_extender_args, encode_filter_result
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState
from tests.integration.extender.shapes import args_names, args_nodes, scheduler_node, scheduler_pod
from tests.support import REPO, node, pod

DEMO = REPO / "webhook" / "limitguard" / "demo"
CPU_REASON = "limit-to-allocatable ratio exceeded (cpu; cluster default)"


def demo_state() -> ClusterState:
    """SPEC 2's worked example: node1 limits 6+4 (full at 125%), node2 3+2; pod5 has cpu limit 4."""
    state = ClusterState()
    load_cluster_file(state, DEMO / "cluster.yaml")
    return state


def demo_config() -> Config:
    return load_config(DEMO / "config.yaml")


# -- decoding ------------------------------------------------------------------------------------
def test_decodes_go_field_names_and_old_lowercase_tags_alike():
    go_form = decode_extender_args(orjson.dumps(args_names(scheduler_pod(), ["node1", "node2"])))
    tagged = decode_extender_args(orjson.dumps({"pod": scheduler_pod(), "nodenames": ["node1", "node2"]}))
    for args in (go_form, tagged):
        assert args.node_names == ["node1", "node2"]
        assert args.names_form and args.nodes is None
        assert args.describe_pod() == "default/pod5"


def test_decodes_a_node_list():
    args = decode_extender_args(
        orjson.dumps(args_nodes(scheduler_pod(), [scheduler_node("a"), scheduler_node("b")]))
    )
    assert args.node_names == ["a", "b"] and not args.names_form
    assert args.nodes is not None and args.nodes["b"]["status"]["allocatable"]["cpu"] == "8"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "not valid JSON"),
        (b"[]", "must be a JSON object"),
        (orjson.dumps({"NodeNames": ["a"]}), "pod must be a Pod object"),
        (orjson.dumps({"Pod": {}, "Nodes": None, "NodeNames": None}), "neither nodes nor nodenames"),
        (orjson.dumps({"Pod": {}, "NodeNames": "a"}), "list of node names"),
        (orjson.dumps({"Pod": {}, "NodeNames": ["a", 1]}), "list of node names"),
        (orjson.dumps({"Pod": {}, "NodeNames": ["a", None, ["b"]]}), "list of node names"),
        (
            orjson.dumps({"Pod": {}, "Nodes": {"items": [{"metadata": {}}]}}),
            "items[0]: a Node with metadata.name",
        ),
    ],
)
@pytest.mark.parametrize("lists", [None, NameLists()], ids=["parsed-whole", "with-kept-lists"])
def test_rejects_malformed_args(body, message, lists):
    with pytest.raises(ExtenderProtocolError, match=re.escape(message)):
        decode_extender_args(body, lists=lists)


def test_filter_result_uses_the_form_of_the_request():
    names = decode_extender_args(orjson.dumps(args_names(scheduler_pod(), ["a", "b"])))
    assert orjson.loads(encode_filter_result(names, ["b"], {"a": "why"})) == {
        "nodenames": ["b"],
        "failedNodes": {"a": "why"},
        "failedAndUnresolvableNodes": {},
        "error": "",
    }
    nodes = decode_extender_args(
        orjson.dumps(args_nodes(scheduler_pod(), [scheduler_node("a"), scheduler_node("b")]))
    )
    result = orjson.loads(encode_filter_result(nodes, ["b"], {"a": "why"}))
    assert "nodenames" not in result
    assert [item["metadata"]["name"] for item in result["nodes"]["items"]] == ["b"]


# -- over HTTPS ----------------------------------------------------------------------------------
async def test_filter_with_node_names_fails_the_full_node_with_a_reason(start_extender):
    server = await start_extender(demo_state(), demo_config())
    status, body = await server.post("/extender/filter", args_names(scheduler_pod(), ["node1", "node2"]))
    assert status == 200
    assert body == {
        "nodenames": ["node2"],
        "failedNodes": {"node1": CPU_REASON},  # 10 + 4 > 10; node2 5 + 4 <= 10
        "failedAndUnresolvableNodes": {},  # preemption could free limits: resolvable
        "error": "",
    }


async def test_filter_with_full_nodes_answers_with_the_passing_node_objects(start_extender):
    server = await start_extender(demo_state(), demo_config())
    nodes = [scheduler_node("node1"), scheduler_node("node2")]
    status, body = await server.post("/extender/filter", args_nodes(scheduler_pod(), nodes))
    assert status == 200
    assert body["failedNodes"] == {"node1": CPU_REASON}
    assert body["nodes"]["items"] == [nodes[1]]  # echoed unchanged
    assert "nodenames" not in body


async def test_filter_holds_room_for_pods_nominated_with_equal_or_higher_priority(start_extender):
    state = demo_state()
    preemptor = pod("preemptor", cpu="4", phase="Pending", priority=1000)
    preemptor["status"]["nominatedNodeName"] = "node2"
    state.upsert_pod(preemptor)
    server = await start_extender(state, demo_config())
    status, body = await server.post("/extender/filter", args_names(scheduler_pod(), ["node1", "node2"]))
    assert (status, body["nodenames"]) == (200, [])  # node2: 5 + 4 held + 4 > 10
    urgent = scheduler_pod()
    urgent["spec"]["priority"] = 2000
    status, body = await server.post("/extender/filter", args_names(urgent, ["node1", "node2"]))
    assert body["nodenames"] == ["node2"]


async def test_filter_uses_the_node_object_the_scheduler_sent(start_extender):
    # the scheduler's copy of node1 has 16 cpu (capacity 20 at 125%): 10 + 4 fits there
    server = await start_extender(demo_state(), demo_config())
    status, body = await server.post(
        "/extender/filter", args_nodes(scheduler_pod(), [scheduler_node("node1", cpu="16")])
    )
    assert (status, body["failedNodes"], len(body["nodes"]["items"])) == (200, {}, 1)


async def test_filter_names_every_resource_that_does_not_fit(start_extender):
    server = await start_extender(demo_state(), demo_config())
    big = scheduler_pod(cpu_limit="4", memory_limit="40Gi")  # memory capacity 32Gi x 120% = 38.4Gi
    status, body = await server.post("/extender/filter", args_names(big, ["node1", "node2"]))
    assert (status, body["nodenames"]) == (200, [])
    assert body["failedNodes"] == {
        "node1": "limit-to-allocatable ratio exceeded (cpu, memory; cluster default)",
        "node2": "limit-to-allocatable ratio exceeded (memory; cluster default)",
    }


async def test_prioritize_spreads_limits(start_extender):
    server = await start_extender(demo_state(), demo_config())
    status, body = await server.post("/extender/prioritize", args_names(scheduler_pod(), ["node1", "node2"]))
    # LimitAware raw: cpu (10-14)*100/10 = -40 vs (10-9)*100/10 = 10; memory 3Gi of 38.4Gi on both
    # = 92 -> node1 (-40+92)/2 = 26, node2 (10+92)/2 = 51 -> min-max 0 and 100 -> 0 and 10
    assert status == 200
    assert body == [{"host": "node1", "score": 0}, {"host": "node2", "score": 10}]


async def test_a_candidate_list_sent_again_is_not_parsed_again(start_extender, monkeypatch):
    server = await start_extender(demo_state(), demo_config())
    request = args_names(scheduler_pod(), ["node1", "node2"])
    first = await server.post("/extender/prioritize", request)
    parsed, loads = [], orjson.loads
    monkeypatch.setattr(namelists.orjson, "loads", lambda data: parsed.append(bytes(data)) or loads(data))
    again = await server.post("/extender/prioritize", request)
    passed = await server.post("/extender/filter", request)  # the filter shares the kept lists
    assert first == again == (200, [{"host": "node1", "score": 0}, {"host": "node2", "score": 10}])
    assert passed[0] == 200 and passed[1]["nodenames"] == ["node2"]
    assert orjson.dumps(["node1", "node2"]) not in parsed  # only the pods were parsed
    assert sum(data.endswith(b'"NodeNames":null}') for data in parsed) == 2


async def test_a_repeated_prioritize_gets_the_answer_of_the_state_it_is_asked_in(start_extender):
    """The same list again, with nothing changed, is answered from what was kept (scores, bytes);
    once a node's pods change, the answer is the new state's."""
    state = demo_state()
    server = await start_extender(state, demo_config())
    request = args_names(scheduler_pod(), ["node1", "node2"])
    for _ in range(3):  # the third call is answered from the kept scores and their encoded answer
        answer = await server.post("/extender/prioritize", request)
        assert answer == (200, [{"host": "node1", "score": 0}, {"host": "node2", "score": 10}])
    state.upsert_pod(pod("big", node_name="node2", cpu="8", memory="1Gi"))  # node2: 5 + 8 of 10 cpu
    for _ in range(2):
        answer = await server.post("/extender/prioritize", request)
        assert answer == (200, [{"host": "node1", "score": 10}, {"host": "node2", "score": 0}])


async def test_the_names_a_filter_passes_are_not_parsed_again_by_the_prioritize_after_it(
    start_extender, monkeypatch
):
    server = await start_extender(demo_state(), demo_config())
    status, filtered = await server.post("/extender/filter", args_names(scheduler_pod(), ["node1", "node2"]))
    assert status == 200 and filtered["nodenames"] == ["node2"]  # node1 is full
    parsed, loads = [], orjson.loads
    monkeypatch.setattr(namelists.orjson, "loads", lambda data: parsed.append(bytes(data)) or loads(data))
    status, scores = await server.post("/extender/prioritize", args_names(scheduler_pod(), ["node2"]))
    assert (status, scores) == (200, [{"host": "node2", "score": 0}])
    assert b'["node2"]' not in parsed and any(data.endswith(b'"NodeNames":null}') for data in parsed)


async def test_prioritize_with_full_nodes_and_an_unknown_node(start_extender):
    server = await start_extender(demo_state(), demo_config())
    nodes = [scheduler_node("node2"), scheduler_node("node1")]
    status, body = await server.post("/extender/prioritize", args_nodes(scheduler_pod(), nodes))
    assert (status, body) == (200, [{"host": "node2", "score": 10}, {"host": "node1", "score": 0}])
    status, body = await server.post(
        "/extender/prioritize", args_names(scheduler_pod(), ["node2", "ghost", "node1"])
    )
    assert status == 200
    assert body == [
        {"host": "node2", "score": 10},
        {"host": "ghost", "score": 0},
        {"host": "node1", "score": 0},
    ]


async def test_unknown_nodes_pass_the_filter(start_extender):
    server = await start_extender(demo_state(), demo_config())
    status, body = await server.post("/extender/filter", args_names(scheduler_pod(), ["ghost", "node1"]))
    assert (status, body["nodenames"], list(body["failedNodes"])) == (200, ["ghost"], ["node1"])


@pytest.mark.parametrize(
    ("config", "pod_object"),
    [
        (Config(limit_aware=LimitAwareConfig({"cpu": 125}, enforcement=Enforcement.WARN)), scheduler_pod()),
        (Config(limit_aware=LimitAwareConfig({"cpu": 125})), scheduler_pod(owner_kind="DaemonSet")),
        (Config(limit_aware=LimitAwareConfig({"cpu": 125})), scheduler_pod(namespace="kube-system")),
    ],
    ids=["enforcement-warn", "daemonset", "excluded-namespace"],
)
async def test_filter_passes_everything_when_admission_would_allow(start_extender, config, pod_object):
    server = await start_extender(demo_state(), config)
    status, body = await server.post("/extender/filter", args_names(pod_object, ["node1", "node2"]))
    assert (status, body["nodenames"], body["failedNodes"]) == (200, ["node1", "node2"], {})


async def test_not_ready_state_fails_open_or_errors_as_configured(start_extender):
    state = ClusterState()
    state.upsert_node(node("node1", cpu="1"))
    state.upsert_pod(pod("big", node_name="node1", cpu="8"))
    allow = await start_extender(state, Config(limit_aware=LimitAwareConfig({"cpu": 100})))
    status, body = await allow.post("/extender/filter", args_names(scheduler_pod(), ["node1"]))
    assert (body["nodenames"], body["error"]) == (["node1"], "")
    status, body = await allow.post("/extender/prioritize", args_names(scheduler_pod(), ["node1"]))
    assert body == [{"host": "node1", "score": 0}]
    deny = await start_extender(
        state, Config(limit_aware=LimitAwareConfig({"cpu": 100}), while_not_ready=NotReadyPolicy.DENY)
    )
    status, body = await deny.post("/extender/filter", args_names(scheduler_pod(), ["node1"]))
    assert status == 200 and body["error"] == "limitguard: cluster state not synced yet"


async def test_bad_requests_get_http_errors(start_extender):
    server = await start_extender(demo_state(), demo_config(), max_body_bytes=1024)
    status, body = await server.post(
        "/extender/filter", b"{nope", headers={"Content-Type": "application/json"}
    )
    assert status == 400 and "not valid JSON" in body["error"]
    status, body = await server.post("/extender/prioritize", args_names(scheduler_pod(), ["node1"]))
    assert status == 413 and "1024" in body["error"]


async def test_metrics_count_extender_calls(start_extender):
    server = await start_extender(demo_state(), demo_config())
    await server.post("/extender/filter", args_names(scheduler_pod(), ["node1", "node2"]))
    await server.post("/extender/prioritize", args_names(scheduler_pod(), ["node1", "node2"]))
    status, text = await server.get("/metrics")
    assert status == 200
    assert 'limitguard_extender_requests_total{outcome="checked",verb="filter"} 1.0' in text
    assert 'limitguard_extender_requests_total{outcome="scored",verb="prioritize"} 1.0' in text


async def test_metrics_count_filtered_and_unknown_candidates(start_extender):
    server = await start_extender(demo_state(), demo_config())
    await server.post("/extender/filter", args_names(scheduler_pod(), ["ghost", "node1", "node2"]))
    await server.post("/extender/prioritize", args_names(scheduler_pod(), ["ghost", "other", "node2"]))
    _, text = await server.get("/metrics")
    assert "limitguard_extender_filtered_nodes_total 1.0" in text  # node1 is full
    assert "limitguard_extender_unknown_nodes_total 3.0" in text  # ghost twice, other once


async def test_filter_reason_names_a_request_counted_as_the_limit(start_extender):
    """Names (the node table) and full NodeLists (per node) give the same reason."""
    server = await start_extender(demo_state(), demo_config())
    requested = scheduler_pod()
    requested["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "4"}}
    expected = {
        "node1": "limit-to-allocatable ratio exceeded (cpu (its request; no limit set); cluster default)"
    }
    _, by_names = await server.post("/extender/filter", args_names(requested, ["node1", "node2"]))
    nodes = [scheduler_node("node1"), scheduler_node("node2")]
    _, by_nodes = await server.post("/extender/filter", args_nodes(requested, nodes))
    assert by_names["failedNodes"] == expected == by_nodes["failedNodes"]
    assert by_names["nodenames"] == ["node2"]
