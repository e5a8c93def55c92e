"""The node table answers what the per-node path used to answer for it: room held for nominated
pods, requests carrying Node objects, values past int64. Each against the reference oracle."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.core.config import Config, Enforcement, LimitAwareConfig, UnboundPolicy
from limitguard.core.scoring import ScorerConfig
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.protocol import ExtenderArgs
from limitguard.extender.service import Extender
from limitguard.state import columns
from limitguard.state.store import ClusterState
from limitguard.testing.reference import ReferenceExtender, ReferenceValidator
from tests.support import container, node, pod, pod_create
from tests.unit.state.random_clusters import (
    CANDIDATE_NAMES,
    CONFIGS,
    OPERATIONS,
    PROPERTY_SETTINGS,
    SCORERS,
    apply,
    node_objects,
    pod_objects,
    synced_state,
)

CONFIG = Config(
    limit_aware=LimitAwareConfig(default_ratios={"cpu": 100, "memory": 100}, enforcement=Enforcement.DENY)
)
SCORERS_ALL = (
    ScorerConfig("LimitAware", 2),
    ScorerConfig("NodeResourcesFitPlus", 1),
    ScorerConfig("ScarceResourceAvoidance", 1),
    ScorerConfig("PodState", 1),
)


def both(state: ClusterState, config: Config = CONFIG) -> tuple[Extender, ReferenceExtender]:
    return Extender(state, config, ExtenderConfig(SCORERS_ALL)), ReferenceExtender(
        state, config, ExtenderConfig(SCORERS_ALL)
    )


def names_args(scheduled: dict, names: list[str]) -> ExtenderArgs:
    return ExtenderArgs(pod=scheduled, node_names=names, nodes=None, names_form=True)


def cluster(*nodes: dict) -> ClusterState:
    state = synced_state()
    for item in nodes:
        state.upsert_node(item)
    return state


def test_room_held_for_a_nominated_pod_of_equal_or_higher_priority_fails_the_node_on_the_table():
    state = cluster(node("n1", cpu="4"), node("n2", cpu="4"))
    waiting = pod("preemptor", containers=[container("c", limits={"cpu": "3"})])
    waiting["spec"]["priority"] = 10
    waiting["status"] = {"phase": "Pending", "nominatedNodeName": "n1"}
    state.upsert_pod(waiting)
    assert state.has_nominated_pods()
    table, reference = both(state)
    for priority, failed in ((0, ["n1"]), (10, ["n1"]), (11, [])):
        scheduled = pod("web", containers=[container("c", limits={"cpu": "2"})])
        scheduled["spec"]["priority"] = priority
        args = names_args(scheduled, ["n1", "n2"])
        outcome = table.filter(args)
        assert outcome == reference.filter(args)
        assert sorted(outcome.failed) == failed, priority


def test_a_nominated_pod_s_own_room_is_not_held_against_it():
    state = cluster(node("n1", cpu="4"))
    waiting = pod("web", containers=[container("c", limits={"cpu": "3"})])
    waiting["status"] = {"phase": "Pending", "nominatedNodeName": "n1"}
    state.upsert_pod(waiting)
    table, reference = both(state)
    args = names_args(waiting, ["n1"])
    assert table.filter(args) == reference.filter(args) and table.filter(args).passed == ["n1"]


@PROPERTY_SETTINGS
@given(
    operations=st.lists(OPERATIONS, min_size=2, max_size=25),
    scheduled=pod_objects(bound=False),
    sent=st.lists(node_objects(), max_size=6),
    candidates=st.lists(st.sampled_from(CANDIDATE_NAMES), max_size=10),
    scorers=SCORERS,
    config=CONFIGS,
)
def test_a_request_carrying_node_objects_is_answered_on_a_table_of_its_own(
    operations, scheduled, sent, candidates, scorers, config
):
    """nodeCacheCapable: false. The scheduler's Nodes (their labels, allocatable, ratio map) with
    the state's sums; a candidate it sent no Node for is the state's, or unknown."""
    state = synced_state()
    for operation in operations:
        apply(state, operation)
    table = Extender(state, config, ExtenderConfig(tuple(scorers)))
    reference = ReferenceExtender(state, config, ExtenderConfig(tuple(scorers)))
    nodes = {item["metadata"]["name"]: item for item in sent}
    args = ExtenderArgs(pod=scheduled, node_names=candidates, nodes=nodes, names_form=False)
    assert table.filter(args) == reference.filter(args)
    scored, expected = table.prioritize(args), reference.prioritize(args)
    assert scored == expected and scored.sheet == expected.sheet


HUGE = 2**70  # past int64: no int64 column can hold it or compare with it


def test_values_past_int64_are_answered_exactly_by_the_table():
    state = cluster(
        node("small", cpu="4", memory="8Gi"),
        {"metadata": {"name": "vast"}, "status": {"allocatable": {"cpu": "4", "memory": "32Ei"}}},
    )
    state.ledger.reserve("vast", "default/held", {"memory": 2**62})
    assert state.node_table().columns["memory"].wide
    config = Config(
        limit_aware=LimitAwareConfig(
            default_ratios={"cpu": 100, "memory": 150},
            enforcement=Enforcement.DENY,
            unbound_pods=UnboundPolicy.DENY,
        )
    )
    table, reference = both(state, config)
    validator, oracle = Validator(state, config), ReferenceValidator(state, config)
    for memory in (2**40, 2**62, 2**65 + 1, HUGE):
        scheduled = pod("web", containers=[container("c", limits={"cpu": "1", "memory": str(memory)})])
        args = names_args(scheduled, ["small", "vast", "ghost"])
        assert table.filter(args) == reference.filter(args), memory
        scored, expected = table.prioritize(args), reference.prioritize(args)
        assert scored == expected and scored.sheet == expected.sheet, memory
        review = decode_review(orjson.dumps(pod_create(scheduled)))
        assert validator(review) == oracle(review), memory
    huge = pod("web", containers=[container("c", limits={"memory": str(HUGE)})])
    assert table.filter(names_args(huge, ["small", "vast"])).failed.keys() == {"small", "vast"}


def test_resources_past_the_columns_cap_are_answered_exactly_by_the_table():
    many = {f"example.com/r{index}": "10" for index in range(columns.MAX_COLUMNS + 4)}
    state = cluster(
        {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", **many}}},
        {"metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "4"}}},
    )
    last = next(name for name, column in state.node_table().columns.items() if not column.mirrored)
    ratios = {"cpu": 100, last: 100}
    config = Config(
        limit_aware=LimitAwareConfig(
            default_ratios=ratios, enforcement=Enforcement.DENY, unbound_pods=UnboundPolicy.DENY
        )
    )
    table, reference = both(state, config)
    validator, oracle = Validator(state, config), ReferenceValidator(state, config)
    for amount in ("5", "11"):
        scheduled = pod("web", containers=[container("c", limits={"cpu": "1", last: amount})])
        args = names_args(scheduled, ["n1", "n2"])
        assert table.filter(args) == reference.filter(args), amount
        assert table.prioritize(args).sheet == reference.prioritize(args).sheet, amount
        review = decode_review(orjson.dumps(pod_create(scheduled)))
        assert validator(review) == oracle(review), amount


def test_nodes_sent_as_the_cache_holds_them_are_judged_on_the_state_s_own_table():
    sent = [node("n1", cpu="4"), node("n2", cpu="8")]
    state = cluster(*sent)
    table, reference = both(state)
    scheduled = pod("web", containers=[container("c", limits={"cpu": "6"})])
    args = ExtenderArgs(
        pod=scheduled,
        node_names=["n1", "n2"],
        nodes={n["metadata"]["name"]: n for n in sent},
        names_form=False,
    )
    assert table._request_table(args) is state.node_table()
    assert table.filter(args) == reference.filter(args) and table.filter(args).passed == ["n2"]
    changed = node("n2", cpu="4")  # the scheduler's Node differs from the cache's: a table of its own
    args = ExtenderArgs(
        pod=scheduled, node_names=["n1", "n2"], nodes={"n1": sent[0], "n2": changed}, names_form=False
    )
    assert table._request_table(args) is not state.node_table()
    assert table.filter(args) == reference.filter(args) and table.filter(args).passed == []
