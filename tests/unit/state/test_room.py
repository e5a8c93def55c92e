"""Room per resource of one node, and a pod's fit once some pods are gone (the questions placement
hints and preemption ask), against the node table's own numbers and the admission check."""

from __future__ import annotations

from limitguard.core.config import LimitAwareConfig
from limitguard.state.room import fits_without, node_room
from limitguard.state.store import ClusterState
from tests.support import container, node, pod

CONFIG = LimitAwareConfig(default_ratios={"cpu": 150, "memory": 100})


def cluster() -> ClusterState:
    state = ClusterState()
    state.upsert_node(node("n1", cpu="4", memory="8Gi"))
    state.upsert_node(node("n2", cpu="4", memory="8Gi"))
    for name, cpu in (("a", "2"), ("b", "3")):
        state.upsert_pod(pod(name, node_name="n1", containers=[container("c", limits={"cpu": cpu})]))
    state.ledger.reserve("n1", "default/held", {"cpu": 500})
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


def test_room_is_capacity_minus_allocated_with_held_bindings_as_the_table_holds_it():
    state = cluster()
    room = node_room(state, "n1", CONFIG)
    assert room == {"cpu": 6000 - 5000 - 500, "memory": 8 * 2**30}
    table = state.node_table()
    row = table.rows["n1"]
    for resource, left in room.items():
        capacity = table.capacity(resource, CONFIG.default_ratios[resource])
        assert capacity is not None and int(capacity.free[row]) == left
    assert node_room(state, "ghost", CONFIG) is None


def test_a_pod_fits_once_the_pods_taking_its_room_are_removed():
    state = cluster()
    limits = {"cpu": 3000}
    assert fits_without(state, "n1", limits, [], CONFIG) is False  # 500m left
    assert fits_without(state, "n1", limits, ["default/a"], CONFIG) is False  # 2.5 left
    assert fits_without(state, "n1", limits, ["default/b"], CONFIG) is True  # 3.5 left
    assert fits_without(state, "n1", limits, ["default/a", "default/held"], CONFIG) is True  # a hold too
    assert (
        fits_without(state, "n2", limits, ["default/b"], CONFIG) is True
    )  # not counted there: nothing leaves
    assert fits_without(state, "n2", {"cpu": 6001}, ["default/b"], CONFIG) is False
    assert fits_without(state, "ghost", limits, [], CONFIG) is None
