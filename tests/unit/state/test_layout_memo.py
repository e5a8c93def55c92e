"""What is memoised on the node layout (a placement's eligible rows) follows every node change,
and a node update that changes nothing recorded (a kubelet status update) changes nothing."""

from __future__ import annotations

from typing import Any

from limitguard.core.config import LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import Placement
from limitguard.state.scan import eligible_rows, unbound_verdict
from limitguard.state.store import ClusterState
from tests.support import container
from tests.unit.state.random_clusters import synced_state

CONFIG = LimitAwareConfig(default_ratios={"cpu": 100}, unbound_pods=UnboundPolicy.DENY)


def node(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"pool": "a"}},
        "spec": extra,
        "status": {"allocatable": {"cpu": cpu}, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def verdict(state, placement: Placement, cpu_millis: int):
    table = state.node_table()
    return unbound_verdict(
        table, "pod p", {"cpu": cpu_millis}, placement, state.node, state.allocated, CONFIG
    )


def test_eligible_rows_follow_added_changed_and_removed_nodes() -> None:
    state = synced_state()
    state.upsert_node(node("small", "1"))
    anywhere = Placement({})
    assert verdict(state, anywhere, 2000).reason == "no-room"
    state.upsert_node(node("big", "4"))  # added
    assert verdict(state, anywhere, 2000).reason == "fits"
    state.upsert_node(node("big", "4", taints=[{"key": "gpu", "effect": "NoSchedule"}]))  # changed
    refused = verdict(state, anywhere, 2000)
    assert refused.reason == "no-room" and "1 eligible node checked" in refused.message
    tolerant = Placement({"tolerations": [{"key": "gpu", "operator": "Exists"}]})
    assert verdict(state, tolerant, 2000).reason == "fits"
    state.remove_node("big")  # removed
    assert verdict(state, tolerant, 2000).reason == "no-room"
    assert eligible_rows(state.node_table(), tolerant).count == 1


def test_a_node_update_that_changes_nothing_recorded_keeps_the_row_order_and_the_memo() -> None:
    state = synced_state()
    for name in ("n1", "n2"):
        state.upsert_node(node(name, "1"))
    table = state.node_table()
    first = eligible_rows(table, Placement({}))
    order = table.seq.copy()
    heartbeat = node("n1", "1")
    heartbeat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-11-23T00:00:00Z"
    state.upsert_node(heartbeat)
    assert eligible_rows(state.node_table(), Placement({})) is first
    assert (state.node_table().seq == order).all()
    assert [record.name for record in state.nodes()] == ["n1", "n2"]  # the reference's order too
    state.upsert_node(node("n1", "2"))  # allocatable changed: a real update
    assert eligible_rows(state.node_table(), Placement({})) is not first
    assert [record.name for record in state.nodes()] == ["n2", "n1"]


def test_the_table_is_copied_when_the_state_becomes_ready_not_by_the_first_scan() -> None:
    state = ClusterState()
    state.upsert_node(node("n1", "4"))
    state.upsert_pod(
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [container(limits={"cpu": "1"})]},
        }
    )
    row = state.table.rows["n1"]
    assert "cpu" not in state.table.columns or int(state.table.columns["cpu"].committed[row]) == 0
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    assert int(state.table.columns["cpu"].committed[row]) == 1000  # read without node_table()
