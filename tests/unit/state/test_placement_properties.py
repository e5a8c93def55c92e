"""Room labels from the node table against a per-node reference, and the hint's term against them,
over random clusters (nodes with annotations, pods, ledger holds, removals).

The reference walks the nodes: a node checks a resource when its effective ratio map (annotation,
pool, else the cluster default) names it; its room is `allocatable x percent // 100` less the
state's allocated limits (ledger included). The labels the leader writes must say exactly that,
rounded down, and the term must match a node exactly when the labels say the pod fits: never a
node without room, always a node with room in whole label units.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from limitguard.core.hints import preferred_term, requirements
from limitguard.core.limitaware import effective_ratios
from limitguard.core.ratios import limit_capacity
from limitguard.core.roomlabels import desired_labels, label_unit, label_value, room_label_key
from limitguard.state.placement import RatioedResources, live_rows, node_rooms, room_columns
from limitguard.state.store import ClusterState
from tests.support import node
from tests.unit.admission.hint_cluster import requirement_matches
from tests.unit.state.random_clusters import (
    CONFIGS,
    GPU,
    NODE_NAMES,
    OPERATIONS,
    PROPERTY_SETTINGS,
    apply,
    synced_state,
)

LIMITS = st.dictionaries(
    st.sampled_from(["cpu", "memory", GPU]),
    st.sampled_from([1, 100, 999, 1000, 1001, 4000, 2**20, 2**20 + 1, 2**30, 3 * 2**30]),
    min_size=1,
    max_size=3,
)


def reference_room(state: ClusterState, name: str, resource: str, config) -> int | None:
    record = state.node(name)
    assert record is not None
    ratios = effective_ratios(record, config.limit_aware)
    if resource not in ratios:
        return None
    return limit_capacity(record.allocatable.get(resource, 0), ratios[resource]) - state.allocated(name).get(
        resource, 0
    )


@settings(PROPERTY_SETTINGS, max_examples=300)
@given(operations=st.lists(OPERATIONS, min_size=4, max_size=40), config=CONFIGS, limits=LIMITS)
def test_labels_say_each_nodes_room_and_the_term_matches_where_the_pod_fits(operations, config, limits):
    state = synced_state()
    state.replace_nodes([node(name) for name in NODE_NAMES])  # then changed at random
    for operation in operations:
        apply(state, operation)
    default = config.limit_aware.default_ratios
    resources = RatioedResources(default).update(state)
    expected_resources = set(default)
    for record in state.nodes():
        expected_resources |= set(record.ratio_override or ())
    assert resources == expected_resources
    table = state.node_table()
    columns = room_columns(table, resources, default)
    labels = {}
    for row, name in live_rows(table, columns.changed_rows(None)):
        rooms = columns.at(row)
        assert rooms == node_rooms(table, name, resources, default)
        for resource in resources - columns.inexact:
            assert rooms[resource].room == reference_room(state, name, resource, config), (name, resource)
        labels[name] = desired_labels(rooms)
        for resource, found in rooms.items():
            assert labels[name][room_label_key(resource)] == label_value(found.room, resource)
    keys = {key for found in labels.values() for key in found}
    found = requirements(limits, keys.__contains__)
    if isinstance(found, str):
        assert found == "no-room-labels" or not keys
        return
    term = preferred_term(found, 100)
    for name, node_labels in labels.items():
        matched = all(requirement_matches(r, node_labels) for r in term["preference"]["matchExpressions"])
        for resource, _ in found:
            room = reference_room(state, name, resource, config)
            unit = label_unit(resource)
            whole = -(-limits[resource] // unit) * unit  # the limit in whole label units, rounded up
            if room is None or room >= whole:
                continue
            assert not matched, (name, resource, room, limits[resource])  # never a node without room
        if all(
            (room := reference_room(state, name, resource, config)) is None
            or room >= -(-limits[resource] // label_unit(resource)) * label_unit(resource)
            for resource, _ in found
        ):
            assert matched, (name, limits)


def test_a_node_removed_and_another_added_in_its_row_is_looked_at_again():
    state = synced_state()
    state.replace_nodes([node("n1"), node("n2")])
    table = state.node_table()
    before = room_columns(table, frozenset({"cpu"}), {"cpu": 100})
    state.remove_node("n1")
    state.upsert_node(node("n3"))  # the same allocatable, in n1's row
    table = state.node_table()
    after = room_columns(table, frozenset({"cpu"}), {"cpu": 100})
    assert [name for _, name in live_rows(table, after.changed_rows(before))] == ["n3"]
