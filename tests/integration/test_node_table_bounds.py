"""The node table's columns stay bounded whatever names the nodes' annotations and resources carry.

Every node may name up to 32 resources in its ratio annotation (core.ratios.MAX_RATIO_RESOURCES), all
different from node to node, and the apiserver accepts any valid extended resource name in a node's
allocatable and a pod's limits. The table mirrors at most MAX_COLUMNS of them as arrays; the rest are
judged by the reference path, with the same answers.
"""

from __future__ import annotations

import json
import logging

from limitguard.core.config import Config
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.protocol import ExtenderArgs
from limitguard.extender.service import Extender
from limitguard.state.columns import MAX_COLUMNS, Column
from limitguard.state.scan import fit_failures
from limitguard.state.store import ClusterState
from limitguard.testing.builders import container, node, pod

NODES = 120


def annotated_state() -> ClusterState:
    """NODES nodes, each naming 32 resources of its own in its annotation and owning one device."""
    state = ClusterState()
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    for index in range(NODES):
        ratios = {f"example.com/r{index}-{k}": 100 for k in range(31)}
        ratios[f"example.com/dev{index}"] = 150
        state.upsert_node(
            node(
                f"n{index:03d}",
                annotations={RATIO_ANNOTATION: json.dumps(ratios)},
                extra={f"example.com/dev{index}": "4"},
            )
        )
    return state


def mirrored(state: ClusterState) -> list[Column]:
    return [column for column in state.node_table().columns.values() if column.mirrored]


def test_columns_stop_at_the_cap_and_the_table_holds_no_arrays_for_the_rest(caplog):
    with caplog.at_level(logging.WARNING):
        state = annotated_state()
    table = state.node_table()
    assert len(table.columns) > NODES * 32  # every name is known to the table...
    assert len(mirrored(state)) == MAX_COLUMNS  # ...but only MAX_COLUMNS hold arrays
    array_bytes = sum(getattr(column, field).nbytes for column in mirrored(state) for field in Column.FIELDS)
    assert array_bytes <= MAX_COLUMNS * len(Column.FIELDS) * 8 * table.size
    assert sum("exact path" in record.getMessage() for record in caplog.records) == 1  # once


def extender_filter(state: ClusterState, resource: str, amount: str) -> tuple[list[str], dict[str, str]]:
    extender = Extender(state, Config(), ExtenderConfig(()))
    spec_pod = pod("p", containers=[container("c", limits={resource: amount})])
    names = [f"n{index:03d}" for index in range(NODES)]
    args = ExtenderArgs(pod=spec_pod, node_names=names, nodes=None, names_form=True)
    outcome = extender.filter(args)
    return outcome.passed, outcome.failed


def test_a_resource_without_a_column_is_judged_exactly_by_the_exact_path():
    state = annotated_state()
    last = NODES - 1  # its resources came last: no column
    resource = f"example.com/dev{last}"
    table = state.node_table()
    assert not table.columns[resource].mirrored
    (failed_rows,) = fit_failures(table, [(resource, 7)], {})  # in Python integers, from the records
    assert [table.names[row] for row in failed_rows.nonzero()[0]] == [f"n{last:03d}"]
    # 4 devices x 150% = 6 on its own node; no other node checks the resource (no default ratio)
    passed, failed = extender_filter(state, resource, "6")
    assert failed == {} and len(passed) == NODES
    passed, failed = extender_filter(state, resource, "7")
    assert list(failed) == [f"n{last:03d}"] and len(passed) == NODES - 1
    # the same answers as for a resource that has a column
    first = "example.com/dev0"
    assert state.node_table().columns[first].mirrored
    assert extender_filter(state, first, "7")[1].keys() == {"n000"}


def test_pods_naming_many_resources_add_no_arrays_past_the_cap():
    state = annotated_state()
    before = len(mirrored(state))
    limits = {f"example.org/pod-{k}": "1" for k in range(500)}
    state.upsert_pod(
        {
            **pod("wide", containers=[container("c", limits=limits)]),
            "spec": {"nodeName": "n000", "containers": [container("c", limits=limits)]},
        }
    )
    assert state.committed("n000")["example.org/pod-7"] == 1  # the state still counts it exactly
    state.node_table()  # synced
    assert len(mirrored(state)) == before == MAX_COLUMNS
