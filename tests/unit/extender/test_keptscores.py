"""Kept scores (extender.keptscores): every row's values kept per pod shape, brought up to date
row by row, against scoring afresh.

Every node stays in the cluster while pods come, go and are bound, the ledger holds and releases
room and nodes change, and each call sends another candidate list (kube-scheduler starts each
search elsewhere and sends the nodes in the order they passed): after each change the answer from
the kept values must equal the reference extender's. Then the mechanics: which rows are rescored,
and when the kept values are used as they are, rescored or dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.core.config import Config, LimitAwareConfig
from limitguard.core.podrules import DEFAULT_RULES
from limitguard.core.scoring import PodFacts, ScorerConfig
from limitguard.extender import columnar, keptscores
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.keptscores import KeptScores
from limitguard.extender.protocol import ExtenderArgs
from limitguard.extender.service import Extender
from limitguard.state.store import ClusterState
from limitguard.state.table import NodeTable
from limitguard.testing.reference import ReferenceExtender
from tests.support import container, node, pod
from tests.unit.state.random_clusters import (
    CONFIGS,
    NODE_NAMES,
    POD_NAMES,
    PROPERTY_SETTINGS,
    SCORERS,
    apply,
    node_objects,
    pod_objects,
    synced_state,
)
from tests.unit.state.test_table_properties import assert_same_priorities

CHANGES = st.one_of(  # nothing that adds or removes a node
    st.tuples(st.just("node"), node_objects()),
    st.tuples(st.just("pod"), pod_objects()),
    st.tuples(st.just("delete-pod"), st.sampled_from(POD_NAMES)),
    st.tuples(
        st.just("reserve"),
        st.sampled_from(NODE_NAMES),
        st.sampled_from(POD_NAMES),
        st.dictionaries(st.sampled_from(["cpu", "memory"]), st.sampled_from([100, 4000, 2**30]), max_size=2),
    ),
    st.tuples(st.just("release"), st.sampled_from(POD_NAMES)),
)


@PROPERTY_SETTINGS
@given(
    first=st.lists(st.tuples(st.just("node"), node_objects()), min_size=len(NODE_NAMES), max_size=12),
    changes=st.lists(CHANGES, min_size=1, max_size=25),
    scheduled=pod_objects(bound=False),
    lists=st.lists(st.lists(st.sampled_from([*NODE_NAMES, "ghost-1"]), max_size=10), min_size=1, max_size=4),
    scorers=SCORERS,
    config=CONFIGS,
    any_share=st.booleans(),
)
def test_kept_scores_rescored_row_by_row_equal_the_reference(
    first, changes, scheduled, lists, scorers, config, any_share
):
    state = synced_state()
    for name, operation in zip(NODE_NAMES, first, strict=False):
        apply(state, ("node", {**operation[1], "metadata": {**operation[1]["metadata"], "name": name}}))
    kept = Extender(state, config, ExtenderConfig(tuple(scorers)))
    reference = ReferenceExtender(state, config, ExtenderConfig(tuple(scorers)))
    calls = [ExtenderArgs(pod=scheduled, node_names=names, nodes=None, names_form=True) for names in lists]
    for args in calls * 2:  # a second time: from values kept for every row
        assert_same_priorities(kept.prioritize(args), reference.prioritize(args))
    with patch.object(keptscores, "_MOST_RESCORED_SHARE", 1.0 if any_share else 0.25):
        for index, change in enumerate(changes):
            apply(state, change)
            args = calls[index % len(calls)]
            assert_same_priorities(kept.prioritize(args), reference.prioritize(args))


SCORERS_ALL = (
    ScorerConfig("LimitAware", 2),
    ScorerConfig("NodeResourcesFitPlus", 1),
    ScorerConfig("ScarceResourceAvoidance", 1),
    ScorerConfig("PodState", 1),
)
CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 200, "memory": 150}))
POD = pod("web", phase="Pending", containers=[container("c", limits={"cpu": "2", "memory": "1Gi"})])


def names_of(state: ClusterState) -> list[str]:
    return [record.name for record in state.nodes()]


def cluster(nodes: int = 40) -> ClusterState:
    state = synced_state()
    for index in range(nodes):
        state.upsert_node(node(f"n{index:02d}", cpu=str(8 + index % 5), memory="32Gi"))
    return state


class ScoredRows:
    """Records how many rows each scorer_parts call scored."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self._score = keptscores.scorer_parts

    def __call__(self, table, rows, size, *args):
        self.sizes.append(size)
        return self._score(table, rows, size, *args)


@contextmanager
def counted(scored: ScoredRows) -> Iterator[None]:
    """*scored* in place of scorer_parts where the kept scores call it: for kept rows, and through
    columnar.score_rows for a shape scored alone."""
    with patch.object(keptscores, "scorer_parts", scored), patch.object(columnar, "scorer_parts", scored):
        yield


def prioritize_around(state: ClusterState, change, names: list[str] | None = None):
    """The sizes scored by two prioritize calls, *change* and a third call; the answers before and
    after the change, the one after checked against the reference."""
    extender = Extender(state, CONFIG, ExtenderConfig(SCORERS_ALL))
    reference = ReferenceExtender(state, CONFIG, ExtenderConfig(SCORERS_ALL))
    args = ExtenderArgs(pod=POD, node_names=names or sorted(names_of(state)), nodes=None, names_form=True)
    scored = ScoredRows()
    with counted(scored):
        extender.prioritize(args)  # the pod's shape seen once: its candidates scored alone
        before = extender.prioritize(args)  # seen again: every row scored and kept
        change()
        after = extender.prioritize(args)
    assert_same_priorities(after, reference.prioritize(args))
    return scored.sizes, before, after


def test_a_binding_held_in_the_ledger_rescores_its_node_alone():
    state = cluster()
    sizes, before, after = prioritize_around(
        state, lambda: state.ledger.reserve("n07", "default/other", {"cpu": 6000, "memory": 2**33})
    )
    assert sizes == [40, 40, 1]
    limit_aware = [sheet.columns[0].raw for sheet in (before.sheet, after.sheet)]
    assert limit_aware[0][7] > limit_aware[1][7] and limit_aware[0][:7] == limit_aware[1][:7]


@pytest.mark.parametrize("order", ["consecutive", "reversed"])
@pytest.mark.parametrize("bound", [["n03", "n30"], ["n01", "n04", "n09", "n16", "n25", "n36"]])
def test_rows_changed_together_are_rescored_together_in_any_candidate_order(order, bound):
    state = cluster()

    def bindings() -> None:
        for index, name in enumerate(bound):
            state.ledger.reserve(name, f"default/b{index}", {"cpu": 6000 - 500 * index, "memory": 2**34})

    names = sorted(names_of(state), reverse=order == "reversed")  # reversed: rows looked up through an index
    sizes, before, after = prioritize_around(state, bindings, names)
    assert sizes == [40, 40, len(bound)] and after.scores != before.scores


def test_nothing_changed_gives_the_last_answer_and_another_list_reads_the_kept_rows():
    state = cluster()
    names = [f"n{index:02d}" for index in range(20)]
    bound = pod("other", node_name="n33", containers=[container("c", limits={"cpu": "4"})])
    sizes, before, after = prioritize_around(state, lambda: state.upsert_pod(bound), names)
    assert sizes == [20, 40, 1] and after.scores == before.scores  # n33 is no candidate
    extender = Extender(state, CONFIG, ExtenderConfig(SCORERS_ALL))
    reference = ReferenceExtender(state, CONFIG, ExtenderConfig(SCORERS_ALL))
    rotated = [*sorted(names_of(state))[25:], *sorted(names_of(state))[:5]]  # where a next search may start
    scored = ScoredRows()
    with counted(scored):
        for names_sent in (names, names, rotated, rotated[::-1]):
            args = ExtenderArgs(pod=POD, node_names=names_sent, nodes=None, names_form=True)
            outcome = extender.prioritize(args)
            assert_same_priorities(outcome, reference.prioritize(args))
        again = extender.prioritize(args)
    assert scored.sizes == [20, 40]  # the other lists only read the kept rows
    assert again.score_array is outcome.score_array  # the same candidates, nothing changed


def test_many_changed_rows_a_new_resource_or_another_pod_are_scored_afresh():
    state = cluster()

    def many() -> None:
        for index, name in enumerate(sorted(names_of(state))[:12]):
            state.ledger.reserve(name, f"default/p{index}", {"cpu": 1000})

    assert prioritize_around(state, many)[0] == [40, 40, 40]  # 12 of 40 rows: past a quarter
    other_state = cluster()
    gpu = node("n05", cpu="9", extra={"nvidia.com/gpu": "4"})  # a column for a new resource
    assert prioritize_around(other_state, lambda: other_state.upsert_node(gpu))[0] == [40, 40, 40]
    table = state.node_table()
    names = sorted(names_of(state))
    memo = KeptScores(SCORERS_ALL, CONFIG.limit_aware.default_ratios)
    candidates = table.candidates(names)
    for _ in range(2):
        memo.score(table, candidates, names, PodFacts.from_spec(POD["spec"], None, DEFAULT_RULES))
    other = PodFacts.from_spec({"containers": [container("c", limits={"cpu": "1"})]}, None, DEFAULT_RULES)
    scored = ScoredRows()
    with counted(scored):
        for _ in range(3):
            memo.score(table, candidates, names, other)
        memo.score(table, candidates, names, PodFacts.from_spec(POD["spec"], None, DEFAULT_RULES))
    assert scored.sizes == [40, 40]  # another pod: alone, then every row; the first still kept


def test_the_change_log_lists_the_rows_of_each_version_and_forgets_what_it_cannot_hold():
    state = cluster(8)
    table = state.node_table()
    start = table.version
    state.ledger.reserve("n01", "default/a", {"cpu": 100})
    state.upsert_pod(pod("b", node_name="n03", containers=[container("c", limits={"cpu": "1"})]))
    table = state.node_table()
    assert sorted(table.changed_since(start)) == [table.rows["n01"], table.rows["n03"]]
    assert table.changed_since(table.version) == []
    state.upsert_pod(pod("g", node_name="n02", containers=[container("c", limits={"example.com/new": "1"})]))
    assert state.node_table().changed_since(start) is None  # a new column: any row may score otherwise
    fresh = NodeTable()
    assert fresh.changed_since(-5) is None  # older than anything logged
