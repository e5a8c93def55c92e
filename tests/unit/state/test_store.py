import json

import pytest
import yaml

from limitguard.core.config import LimitAwareConfig
from limitguard.core.limitaware import effective_ratios
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.kube.filefeed import ClusterFileError, load_cluster_file
from limitguard.state.ledger import BindingLedger
from limitguard.state.store import ClusterState
from limitguard.testing.clock import FakeClock
from tests.support import FIXTURES, REPO, container, node, pod


def test_sums_follow_add_update_and_delete():
    state = ClusterState()
    state.upsert_node(node("n1"))
    state.upsert_pod(pod("a", node_name="n1", cpu="2", memory="1Gi"))
    state.upsert_pod(pod("b", node_name="n1", cpu="500m"))
    assert state.committed("n1") == {"cpu": 2500, "memory": 1024**3}
    state.upsert_pod(pod("a", node_name="n1", cpu="3", memory="1Gi"))  # update replaces, never adds twice
    assert state.committed("n1")["cpu"] == 3500
    state.delete_pod(pod("b"))
    assert state.committed("n1")["cpu"] == 3000


def test_pending_and_terminal_pods_do_not_count():
    state = ClusterState()
    state.upsert_pod(pod("pending", cpu="2", phase="Pending"))
    state.upsert_pod(pod("done", node_name="n1", cpu="2", phase="Succeeded"))
    assert state.committed("n1").get("cpu", 0) == 0
    state.upsert_pod(pod("running", node_name="n1", cpu="2"))
    state.upsert_pod(pod("running", node_name="n1", cpu="2", phase="Failed"))
    assert state.committed("n1")["cpu"] == 0


def test_moving_a_pod_between_nodes_moves_its_limit():
    state = ClusterState()
    state.upsert_pod(pod("a", node_name="n1", cpu="1"))
    state.upsert_pod(pod("a", node_name="n2", cpu="1"))
    assert state.committed("n1")["cpu"] == 0
    assert state.committed("n2")["cpu"] == 1000


def test_replace_pods_removes_what_is_gone():
    state = ClusterState()
    state.replace_pods([pod("a", node_name="n1", cpu="1"), pod("b", node_name="n1", cpu="1")])
    state.replace_pods([pod("b", node_name="n1", cpu="1")])
    assert state.committed("n1")["cpu"] == 1000
    assert state.pod("default", "a") is None


def test_malformed_pod_in_the_cache_counts_nothing_and_does_not_raise():
    state = ClusterState()
    record = state.upsert_pod(pod("bad", node_name="n1", containers=[container(limits={"cpu": "much"})]))
    assert record.limits == {}


def test_node_annotation_valid_malformed_and_absent():
    state = ClusterState()
    valid = state.upsert_node(node("v", annotations={RATIO_ANNOTATION: '{"cpu": "150%"}'}))
    broken = state.upsert_node(node("m", annotations={RATIO_ANNOTATION: '{"cpu": "150"}'}))
    plain = state.upsert_node(node("p"))
    assert valid.ratio_override == {"cpu": 150} and valid.ratio_problem is None
    assert broken.ratio_override is None and "%" in broken.ratio_problem
    assert plain.ratio_override is None and plain.ratio_problem is None
    assert effective_ratios(broken, LimitAwareConfig({"cpu": 100})) == {"cpu": 100}  # the default


def test_readiness_needs_every_kind():
    state = ClusterState()
    state.mark_synced("nodes")
    state.mark_synced("pods")
    assert not state.ready
    state.mark_synced("namespaces")
    assert state.ready
    state.mark_synced("pods", False)
    assert not state.ready


def test_ledger_counts_until_seen_bound_or_expired():
    clock = FakeClock()
    state = ClusterState()
    state.ledger = BindingLedger(30, clock=clock)
    state.upsert_pod(pod("x", cpu="2", phase="Pending"))
    state.ledger.reserve("n1", "default/x", {"cpu": 2000})
    assert state.allocated("n1") == {"cpu": 2000}
    state.upsert_pod(pod("x", node_name="n1", cpu="2"))  # the cache catches up: counted once
    assert state.allocated("n1") == {"cpu": 2000}
    assert len(state.ledger) == 0
    state.ledger.reserve("n1", "default/y", {"cpu": 1000})
    clock.advance(31)
    assert state.allocated("n1") == {"cpu": 2000}


def test_demo_cluster_file_matches_the_spec_worked_example():
    state = ClusterState()
    counts = load_cluster_file(state, REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml")
    assert counts == {"nodes": 2, "pods": 5, "namespaces": 2}
    assert state.ready
    assert state.committed("node1")["cpu"] == 10000
    assert state.committed("node2")["cpu"] == 5000


def test_real_kubectl_json_node_list(tmp_path):
    state = ClusterState()
    load_cluster_file(state, FIXTURES / "nodelist-json-aks-3nodes-2021.edgexr.json")
    nodes = list(state.nodes())
    assert len(nodes) == 3
    assert all(n.allocatable["cpu"] == 1900 for n in nodes)
    gpu = ClusterState()
    load_cluster_file(gpu, FIXTURES / "nodelist-json-gpu-vgpu-a16-nvidia-gpu-capacity.edgexr.json")
    (gpu_node,) = gpu.nodes()
    assert gpu_node.allocatable["nvidia.com/gpu"] == 1


def test_yaml_multi_document_and_json_forms_load_the_same(tmp_path):
    objects = [node("n1"), pod("a", node_name="n1", cpu="1")]
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump_all(objects))
    for name in ("c.json", "c.yaml"):
        state = ClusterState()
        assert load_cluster_file(state, tmp_path / name) == {"nodes": 1, "pods": 1, "namespaces": 0}
        assert state.committed("n1") == {"cpu": 1000}


@pytest.mark.parametrize("content", ["{not json", "a: [b", "just a string", ""])
def test_broken_cluster_files_fail_clearly(tmp_path, content):
    path = tmp_path / "broken.yaml"
    path.write_text(content)
    with pytest.raises(ClusterFileError, match=r"broken\.yaml"):
        load_cluster_file(ClusterState(), path)


def test_missing_cluster_file(tmp_path):
    with pytest.raises(ClusterFileError, match="cannot read"):
        load_cluster_file(ClusterState(), tmp_path / "nope.yaml")


def test_label_index_follows_node_updates_and_deletes():
    state = ClusterState()
    state.replace_nodes(
        [node("a", labels={"zone": "1"}), node("b", labels={"zone": "1", "gpu": "yes"}), node("c")]
    )
    assert [n.name for n in state.nodes_labelled({"zone": "1"})] == ["a", "b"]
    assert [n.name for n in state.nodes_labelled({"zone": "1", "gpu": "yes"})] == ["b"]
    state.upsert_node(node("b", labels={"zone": "2"}))  # relabelled
    assert [n.name for n in state.nodes_labelled({"zone": "1"})] == ["a"]
    state.delete_node(node("a"))
    assert state.nodes_labelled({"zone": "1"}) == []
    state.replace_nodes([node("c", labels={"zone": "1"})])
    assert [n.name for n in state.nodes_labelled({"zone": "1"})] == ["c"]
    assert [n.name for n in state.nodes_labelled({})] == ["c"]


def test_ledger_entries_outlive_their_ttl_while_the_pod_feed_is_behind():
    clock = FakeClock()
    ledger = BindingLedger(30, clock=clock)
    ledger.caught_up()  # a live feed, current at t=0
    ledger.reserve("n1", "default/x", {"cpu": 1000})
    clock.advance(100)  # the watch has been down since t=0: the binding may have happened unseen
    assert ledger.held("n1") == {"cpu": 1000}
    ledger.caught_up()  # the feed is current again and has not shown the pod bound
    assert ledger.held("n1") == {}


@pytest.mark.parametrize("nodes", [2, 8])  # copied row by row (<= 4 dirty rows), and in bulk
@pytest.mark.parametrize(("memory", "wide"), [(2**53, False), (2**53 + 1, True)])
def test_a_sum_past_2_53_makes_its_column_wide(nodes: int, memory: int, wide: bool) -> None:
    """The table's int64 arithmetic is exact up to 2**53; a larger sum sends the resource's
    queries to the per-node reference path, whichever way its rows were copied."""
    state = ClusterState()
    for index in range(nodes):
        state.upsert_node(node(f"n{index}"))
    state.upsert_pod(pod("big", node_name=f"n{nodes - 1}", memory=str(memory)))
    table = state.node_table()
    assert table.columns["memory"].wide is wide
    assert not table.columns["cpu"].wide
    if not wide:
        assert int(table.columns["memory"].committed[table.rows[f"n{nodes - 1}"]]) == memory
