"""The node table against the reference (dict sums, per-node loops), over random clusters.

Random sequences of node add/update/delete, pod add/update/remove and ledger reserve/release are
applied to one ClusterState; after each step the table must mirror the dict sums, and the
node table's answers (unbound-pod scan, extender filter and prioritize) must equal the reference oracle's
exactly, including messages, failure reasons, score sheets and the fallback for huge quantities.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, ExitStack, nullcontext
from unittest.mock import patch

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.admission.validating import Validator
from limitguard.core.config import Config, LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import Placement
from limitguard.core.reports.audit import audit
from limitguard.extender import keptscores
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.protocol import ExtenderArgs, encode_priorities, encode_priority_columns
from limitguard.extender.service import Extender
from limitguard.state import columns as columns_module
from limitguard.state import table as table_module
from limitguard.state.capacity import Capacity
from limitguard.state.columns import exact
from limitguard.state.scan import over_ratio_names, screened_nodes, unbound_verdict
from limitguard.state.store import ClusterState
from limitguard.testing.reference import ReferenceExtender, ReferenceValidator, check_unbound
from tests.support import container
from tests.unit.state.random_clusters import (
    CANDIDATE_NAMES,
    CONFIGS,
    OPERATIONS,
    PROPERTY_SETTINGS,
    SCORERS,
    apply,
    placements,
    pod_objects,
    synced_state,
    unbound_request,
)


def assert_table_mirrors_state(state: ClusterState) -> None:
    table = state.node_table()
    assert set(table.rows) == {node.name for node in state.nodes()}
    for node in state.nodes():
        row = table.rows[node.name]
        assert table.alive[row] and table.names[row] == node.name
        assert table.json_names[row] == orjson.dumps(node.name)[1:-1]
        assert table.unschedulable[row] == node.traits.unschedulable
        assert table.has_override[row] == (node.ratio_override is not None)
        assert table.terminating[row] == state.terminating_pods(node.name)
        assert table.nominated[row] == state.nominated_pods(node.name)
        expected = {
            "allocatable": node.allocatable,
            "committed": state.committed(node.name),
            "held": state.ledger.totals(node.name),
            "scoring": state.scoring_allocated(node.name),
            "requested": state.requested(node.name),
        }
        for resource, column in table.columns.items():
            if column.wide:
                continue
            for field, amounts in expected.items():
                value = int(getattr(column, field)[row])
                if field == "scoring":
                    value += int(column.held[row])
                assert value == amounts.get(resource, 0), (node.name, resource, field)
        for field, amounts in expected.items():
            for resource, amount in amounts.items():
                if not exact(amount):
                    assert table.columns[resource].wide, (resource, field)
    free_rows = [row for row, name in enumerate(table.names) if name is None]
    assert not any(table.alive[row] for row in free_rows)
    for (resource, default), kept in table._capacities.items():  # kept current row by row
        column = table.columns[resource]
        if column.wide:
            continue
        fresh = Capacity.build(table, column, resource, default)
        assert fresh is not None
        for field in ("present", "cap", "free", "room"):
            assert (getattr(kept, field) == getattr(fresh, field)).all(), (resource, default, field)
        # kept row by row too, once asked for: the unbound scan stops on it without scanning
        assert kept.largest_room() == int(fresh.room.max()), (resource, default)


@PROPERTY_SETTINGS
@given(
    operations=st.lists(OPERATIONS, min_size=4, max_size=40),
    queries=st.lists(
        st.tuples(pod_objects(bound=False), placements(), st.booleans()), min_size=1, max_size=4
    ),
    config=CONFIGS,
    in_bulk=st.booleans(),
)
def test_unbound_scan_on_the_table_equals_the_reference(operations, queries, config, in_bulk):
    state = synced_state()
    columnar, reference = Validator(state, config), ReferenceValidator(state, config)
    with copies(in_bulk):
        for index, operation in enumerate(operations):
            apply(state, operation)
            if index % 5 == 4:  # queries between changes: the dirty rows must be picked up
                assert_table_mirrors_state(state)
                for pod, placement, daemonset in queries[:1]:
                    request = unbound_request(json.loads(json.dumps(pod)), placement, daemonset)
                    assert columnar(request) == reference(request)
        assert_table_mirrors_state(state)
        for pod, placement, daemonset in queries:
            request = unbound_request(pod, placement, daemonset)
            assert columnar(request) == reference(request)
            # the same shape under another name: the verdict the columnar validator remembered
            again = json.loads(json.dumps(pod))
            again["metadata"]["name"] += "-again"
            request = unbound_request(again, placement, daemonset)
            assert columnar(request) == reference(request)


def copies(in_bulk: bool) -> AbstractContextManager[object]:
    """Dirty rows are copied one by one up to FEW_ROWS of them, through index arrays beyond (after
    a burst). Random operations between two queries dirty a few rows, so *in_bulk* sends every
    copy the index-array way: both must leave the same table."""
    if not in_bulk:
        return nullcontext()
    stack = ExitStack()
    for module in (columns_module, table_module):
        stack.enter_context(patch.object(module, "FEW_ROWS", 0))
    return stack


@PROPERTY_SETTINGS
@given(
    operations=st.lists(OPERATIONS, min_size=4, max_size=40),
    pod=pod_objects(bound=False),
    candidates=st.lists(st.sampled_from(CANDIDATE_NAMES), max_size=12),
    scorers=SCORERS,
    config=CONFIGS,
    in_bulk=st.booleans(),
    rescore_any_share=st.booleans(),
)
def test_extender_on_the_table_equals_the_reference(
    operations, pod, candidates, scorers, config, in_bulk, rescore_any_share
):
    state = synced_state()
    columnar = Extender(state, config, ExtenderConfig(tuple(scorers)))
    reference = ReferenceExtender(state, config, ExtenderConfig(tuple(scorers)))
    args = ExtenderArgs(pod=pod, node_names=candidates, nodes=None, names_form=True)
    share = 1.0 if rescore_any_share else keptscores._MOST_RESCORED_SHARE  # else one row of 8 at most
    with copies(in_bulk), patch.object(keptscores, "_MOST_RESCORED_SHARE", share):
        for index, operation in enumerate(operations):
            apply(state, operation)
            if index % 7 == 6:
                assert columnar.filter(args) == reference.filter(args)
            if index % 2:  # kept scores brought up to date by the rows each operation changed
                assert_same_priorities(columnar.prioritize(args), reference.prioritize(args))
        assert_table_mirrors_state(state)
    assert columnar.filter(args) == reference.filter(args)
    assert_same_priorities(columnar.prioritize(args), reference.prioritize(args))
    again = columnar.prioritize(args)  # the same candidates again: answered through a template
    assert_same_priorities(again, reference.prioritize(args))
    if again.host_json and again.score_array is not None:
        assert again.template is not None
    passed = ExtenderArgs(pod=pod, node_names=columnar.filter(args).passed, nodes=None, names_form=True)
    assert_same_priorities(columnar.prioritize(passed), reference.prioritize(passed))  # kept by filter


def assert_same_priorities(columnar, reference) -> None:
    assert columnar == reference
    assert columnar.sheet == reference.sheet  # raw and normalised scores of every scorer too
    expected = encode_priorities(reference.priorities)
    assert encode_priority_columns(columnar.hosts, columnar.scores) == expected
    assert encode_priority_columns(columnar.hosts, columnar.scores, columnar.host_json) == expected
    if columnar.score_array is not None:
        assert encode_priority_columns(columnar.hosts, columnar.score_array, columnar.host_json) == expected
    if columnar.template is not None:
        assert columnar.template.encode(columnar.score_array) == expected


def test_a_deleted_node_row_is_reused_and_starts_from_the_state_sums():
    state = synced_state()
    node = {"kind": "Node", "metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "4"}}}
    state.upsert_node(node)
    state.upsert_pod(
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeName": "b", "containers": [container(limits={"cpu": "1"})]},
        }
    )
    row = state.node_table().rows["a"]
    state.remove_node("a")
    state.upsert_node({**node, "metadata": {"name": "b"}})  # the pod was bound to b before b existed
    table = state.node_table()
    assert table.rows == {"b": row}
    assert int(table.columns["cpu"].committed[row]) == 1000
    assert int(table.columns["cpu"].allocatable[row]) == 4000


@pytest.mark.parametrize("nodes", [3, 8])  # copied row by row (<= 4 dirty rows), and in bulk
def test_a_binding_burst_copies_the_ledger_totals_and_pod_events_every_sum(nodes: int) -> None:
    """Bindings change only a node's ledger total, so the table copies that sum alone for them; a
    node that also had a pod event since the last query gets every sum copied."""
    state = synced_state()
    for index in range(nodes):
        state.upsert_node({"metadata": {"name": f"n{index}"}, "status": {"allocatable": {"cpu": "8"}}})
    state.node_table()
    for index in range(nodes):
        state.ledger.reserve(f"n{index}", f"default/b{index}", {"cpu": 1000 * (index + 1), "memory": 2**20})
    state.upsert_pod(
        {
            "metadata": {"name": "running", "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [container(limits={"cpu": "3"}, requests={"cpu": "1"})]},
        }
    )
    table = state.node_table()
    assert [int(table.columns["cpu"].held[table.rows[f"n{i}"]]) for i in range(nodes)] == [
        1000 * (i + 1) for i in range(nodes)
    ]
    assert int(table.columns["cpu"].committed[table.rows["n1"]]) == 3000
    assert_table_mirrors_state(state)
    state.ledger.release("default/b1")  # seen bound: the ledger lets go, the cache counts it
    state.remove_pod("default/running")
    assert_table_mirrors_state(state)


def test_the_columnar_scan_answers_a_plain_cluster_itself_with_the_reference_message():
    state = synced_state()
    for index in range(6):
        state.upsert_node(
            {
                "metadata": {"name": f"n{5 - index}", "labels": {"zone": "a" if index % 2 else "b"}},
                "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}},
            }
        )
    config = Config(
        limit_aware=LimitAwareConfig(default_ratios={"cpu": 150}, unbound_pods=UnboundPolicy.DENY)
    )
    table = state.node_table()
    big = Placement({"nodeSelector": {"zone": "a"}})
    verdict = unbound_verdict(
        table, "pod p", {"cpu": 4000}, big, state.node, state.allocated, config.limit_aware
    )
    reference = check_unbound(
        "pod p", {"cpu": 4000}, big, state.nodes_labelled({"zone": "a"}), state.allocated, config.limit_aware
    )
    assert verdict is not None and not verdict.allowed and verdict == reference
    assert '3 eligible nodes checked); for example node "n0"' in verdict.message  # name order
    fits = unbound_verdict(
        table, "pod p", {"cpu": 3000}, Placement({}), state.node, state.allocated, config.limit_aware
    )
    assert fits is not None and fits.reason == "fits"


def test_the_largest_room_follows_bindings_onto_the_emptiest_nodes():
    """kube-scheduler binds to the emptiest nodes, the very rows holding the largest room: it
    stays known while another row still has it, and falls to the next room once none has."""
    state = synced_state()
    for index in range(3):
        state.upsert_node({"metadata": {"name": f"n{index}"}, "status": {"allocatable": {"cpu": "4"}}})
    cpu = state.node_table().capacity("cpu", 100)
    assert cpu is not None and cpu.largest_room() == 4000
    found = []
    for index in range(3):
        state.ledger.reserve(f"n{index}", f"default/p{index}", {"cpu": 3000})
        state.node_table()
        found.append(cpu.largest_room())
        assert found[-1] == int(cpu.room.max())
    assert found == [4000, 4000, 1000]
    pod = Placement({})
    config = LimitAwareConfig(default_ratios={"cpu": 100}, unbound_pods=UnboundPolicy.DENY)
    table = state.node_table()
    for limit, allowed in ((1000, True), (1001, False)):
        verdict = unbound_verdict(table, "pod p", {"cpu": limit}, pod, state.node, state.allocated, config)
        assert verdict == check_unbound("pod p", {"cpu": limit}, pod, state.nodes(), state.allocated, config)
        assert verdict is not None and verdict.allowed is allowed
    state.ledger.release("default/p1")  # room comes back on one node: the largest rises with it
    state.node_table()
    assert cpu.largest_room() == 4000
    for index in range(3, 9):  # nodes emptier than any, then a burst copied in one batch
        state.upsert_node({"metadata": {"name": f"n{index}"}, "status": {"allocatable": {"cpu": "8"}}})
    cpu = state.node_table().capacity("cpu", 100)
    assert cpu is not None and cpu.largest_room() == 8000
    for index in range(3, 9):
        state.ledger.reserve(f"n{index}", f"default/p{index}", {"cpu": 7000})
    state.node_table()
    assert cpu.largest_room() == int(cpu.room.max()) == 4000


@PROPERTY_SETTINGS
@given(operations=st.lists(OPERATIONS, min_size=4, max_size=40), config=CONFIGS)
def test_audit_screened_on_the_table_equals_the_reference(operations, config):
    state = synced_state()
    for operation in operations:
        apply(state, operation)
    limit_aware = config.limit_aware
    reference = audit(list(state.nodes()), state.committed, lambda nodes: {}, limit_aware)
    over = over_ratio_names(state.node_table(), limit_aware.default_ratios)
    if over is None:  # a wide column or an unsafe ratio: the command audits every node itself
        return
    assert sorted(over) == sorted(finding.node for finding in reference.findings)
    nodes, checked_before, unchecked_before = screened_nodes(state, limit_aware)
    screened = audit(
        nodes,
        state.committed,
        lambda nodes: {},
        limit_aware,
        checked_before=checked_before,
        unchecked_before=unchecked_before,
    )
    assert screened.to_dict() == reference.to_dict()
