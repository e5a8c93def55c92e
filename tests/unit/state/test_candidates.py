"""The node table's cached candidate resolution (NodeTable.candidates) against a fresh lookup.

kube-scheduler sends the same candidate list call after call, so the table keeps the last list's
rows; these properties check the kept answer always equals resolving the names afresh, through node
adds, deletes and renames (a delete and an add), and that lists that differ are never confused, not
even where joining their names would give one string.
"""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.core.config import Config, Enforcement, LimitAwareConfig
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.protocol import ExtenderArgs
from limitguard.extender.service import Extender
from limitguard.state.candidates import names_key
from limitguard.state.table import NodeTable
from tests.unit.state.random_clusters import (
    CANDIDATE_NAMES,
    NODE_NAMES,
    OPERATIONS,
    PROPERTY_SETTINGS,
    apply,
    synced_state,
)


def assert_resolved(table: NodeTable, names: list[str]) -> None:
    found = table.candidates(names)
    expected = [table.rows.get(name, -1) for name in names]
    assert found.rows.tolist() == expected
    assert found.known.tolist() == [row >= 0 for row in expected]
    known_rows = [row for row in expected if row >= 0]
    assert (found.count, found.unknown) == (len(known_rows), len(names) - len(known_rows))
    assert np.arange(table.size)[found.index].tolist() == known_rows  # a slice or an array alike
    known_names = [name for name in names if name in table.rows]
    assert found.host_json() == [orjson.dumps(name)[1:-1] for name in known_names]


@PROPERTY_SETTINGS
@given(
    steps=st.lists(
        st.tuples(OPERATIONS, st.lists(st.sampled_from(CANDIDATE_NAMES), max_size=10)),
        min_size=1,
        max_size=30,
    ),
    repeated=st.lists(st.sampled_from(CANDIDATE_NAMES), max_size=10),
)
def test_kept_candidates_equal_a_fresh_resolution_through_node_churn(steps, repeated):
    state = synced_state()
    for operation, other in steps:
        apply(state, operation)
        table = state.node_table()
        assert_resolved(table, repeated)  # the same list again: answered from the cache when valid
        assert_resolved(table, other)  # a different list in between replaces the cached one
        assert_resolved(table, list(repeated))  # an equal list, another object


def test_the_same_list_is_resolved_once_until_a_node_comes_or_goes():
    state = synced_state()
    for name in NODE_NAMES[:3]:
        state.upsert_node({"metadata": {"name": name}, "status": {"allocatable": {"cpu": "1"}}})
    table = state.node_table()
    names = ["n2", "ghost-1", "n0"]
    first = table.candidates(names)
    assert table.candidates(list(names)) is first
    state.upsert_node({"metadata": {"name": "n0"}, "status": {"allocatable": {"cpu": "2"}}})  # an update
    assert state.node_table().candidates(names) is first
    state.remove_node("n0")
    after_delete = state.node_table().candidates(names)
    assert after_delete is not first and after_delete.rows.tolist()[2] == -1
    state.upsert_node({"metadata": {"name": "ghost-1"}, "status": {"allocatable": {"cpu": "1"}}})  # renamed
    renamed = state.node_table().candidates(names)
    assert renamed.rows.tolist() == [table.rows["n2"], table.rows["ghost-1"], -1]


def test_lists_whose_names_join_to_one_string_are_never_confused():
    state = synced_state()
    for name in ("a", "b"):
        state.upsert_node({"metadata": {"name": name}, "status": {"allocatable": {"cpu": "1"}}})
    table = state.node_table()
    split = table.candidates(["a", "b"])
    assert split.count == 2
    joined = table.candidates(["a\nb"])  # the two names joined by a newline: a node no table knows
    assert joined.rows.tolist() == [-1]
    assert table.candidates(["a", "b"]).count == 2
    assert table.candidates(["a\nb", ""]).rows.tolist() == [-1, -1]
    assert table.candidates(["a", "b\n"]).rows.tolist() == [table.rows["a"], -1]


@given(st.lists(st.text(max_size=4), max_size=6), st.lists(st.text(max_size=4), max_size=6))
def test_two_lists_share_a_key_exactly_when_they_are_equal(names, others):
    assert (names_key(names) == names_key(others)) == (names == others)
    assert orjson.loads(names_key(names)) == names  # the key is the list's JSON array


def test_a_filter_keeps_its_passed_names_under_the_bytes_kube_scheduler_sends():
    names = ["node-a", "ip-10-0-1-23.ec2.internal", "n\u00e9"]
    go_encoded = b'["node-a","ip-10-0-1-23.ec2.internal","n\xc3\xa9"]'  # encoding/json's Marshal
    assert names_key(names) == go_encoded


def test_the_names_a_filter_passes_are_kept_for_the_prioritize_that_follows(monkeypatch):
    state = synced_state()
    for index, cpu in enumerate(["1", "8", "2", "8"]):
        state.upsert_node({"metadata": {"name": f"n{index}"}, "status": {"allocatable": {"cpu": cpu}}})
    config = Config(limit_aware=LimitAwareConfig(enforcement=Enforcement.DENY, default_ratios={"cpu": 100}))
    extender = Extender(state, config, ExtenderConfig(config.scorers))
    pod = {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "4"}}}]},
    }
    names = ["n3", "ghost-1", "n0", "n1", "n2"]
    outcome = extender.filter(ExtenderArgs(pod=pod, node_names=names, nodes=None, names_form=True))
    assert outcome.passed == ["n3", "ghost-1", "n1"] and set(outcome.failed) == {"n0", "n2"}
    table = state.node_table()

    def no_lookups(names):
        raise AssertionError("resolved again")

    monkeypatch.setattr(table, "node_rows", no_lookups)
    kept = table.candidates(list(outcome.passed))
    assert kept.rows.tolist() == [table.rows["n3"], -1, table.rows["n1"]]
    assert kept.host_json() == [b"n3", b"n1"]
    assert table.candidates(names).rows.tolist()[0] == table.rows["n3"]  # the filter's own list too
    with pytest.raises(AssertionError, match="resolved again"):
        table.candidates(["n0"])
