"""bench.placement's model of kube-scheduler: each formula on small cases computed by hand."""

from __future__ import annotations

import random

import pytest

from bench.placement import model
from bench.placement.columns import Columns
from bench.placement.model import Requirement, Resources
from bench.placement.scheduler import (
    Cluster,
    NodeState,
    PodState,
    SchedulingQueue,
    choose,
    profile_weights,
    stranded,
    totals,
)
from limitguard.testing.builders import container, pod

S = model.NANOSECONDS
MI = 1024 * 1024


def hostname_term(operator: str, names: list[str], weight: int = 100) -> dict:
    expression = {"key": "kubernetes.io/hostname", "operator": operator, "values": names}
    return {"weight": weight, "preference": {"matchExpressions": [expression]}}


def pod_state(cpu: str, memory: str, limits: dict | None = None, terms: list | None = None) -> PodState:
    body = pod("p", containers=[container(requests={"cpu": cpu, "memory": memory}, limits=limits)])
    if terms:
        body["spec"]["affinity"] = {
            "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}
        }
    return PodState("default/p", body, 0)


ALLOCATABLE = Resources(4000, 8000)


def node_state(name: str, requested: Resources) -> NodeState:
    node = NodeState(name, {"kubernetes.io/hostname": name}, ALLOCATABLE, ALLOCATABLE)
    node.requested = node.non_zero_requested = requested
    return node


def test_pod_requests_count_missing_requests_as_the_non_zero_defaults_but_not_explicit_zeros() -> None:
    body = pod(
        "p",
        containers=[
            container("a", requests={"cpu": "250m"}),  # no memory request
            container("b", requests={"cpu": "0", "memory": "1Mi"}),  # an explicit zero stays zero
        ],
    )
    actual, non_zero = model.pod_requests(body)
    assert actual == Resources(250, MI)
    assert non_zero == Resources(250, 200 * MI + MI)


def test_fit_filter_checks_the_pod_count_and_only_the_resources_the_pod_requests() -> None:
    allocatable = Resources(4000, 8000)
    assert model.fits_requests(
        Resources(1000, 0), allocatable, Resources(3000, 9000), 0, 110
    )  # memory not asked
    assert not model.fits_requests(Resources(1001, 0), allocatable, Resources(3000, 0), 0, 110)
    assert not model.fits_requests(Resources(0, 0), allocatable, Resources(), 110, 110)


def test_least_allocated_averages_the_free_fraction_of_cpu_and_memory_truncating() -> None:
    # cpu (4000-1000)*100/4000 = 75, memory (8000-5000)*100/8000 = 37 (37.5 truncated): (75+37)/2 = 56
    assert model.least_allocated(Resources(1000, 5000), Resources(4000, 8000)) == 56
    assert model.least_allocated(Resources(5000, 0), Resources(4000, 8000)) == 50  # cpu over: 0
    assert model.least_allocated(Resources(1000, 5000), Resources(4000, 0)) == 75  # no memory: left out


def test_balanced_allocation_scores_the_change_of_balance_between_50_and_100() -> None:
    allocatable = Resources(4000, 8000)
    # fractions 0.25 / 0.5: std 0.125, balance int(87.5) = 87
    assert model.balance(Resources(1000, 4000), allocatable) == 87
    assert model.balance(Resources(8000, 0), allocatable) == 50  # cpu capped at 1: std 0.5
    # before 87, after (0.5, 0.5) 100: 50 + (50 + 13) / 2 = 81
    assert model.balanced_allocation(Resources(1000, 4000), Resources(1000, 0), allocatable) == 81
    # balanced before and after: no change, 75
    assert model.balanced_allocation(Resources(), Resources(1000, 2000), allocatable) == 75
    # from balanced (100) to (0.5, 0): 75, so 50 + (50 - 25) / 2 = 62
    assert model.balanced_allocation(Resources(), Resources(2000, 0), allocatable) == 62


def test_default_normalize_scales_to_the_highest_and_reverses() -> None:
    assert model.default_normalize([1, 3, 0]) == [33, 100, 0]
    assert model.default_normalize([0, 0]) == [0, 0]
    assert model.default_normalize([0, 0], reverse=True) == [100, 100]
    assert model.default_normalize([1, 2], reverse=True) == [50, 0]


def test_node_affinity_sums_the_weights_of_the_matching_preferred_terms() -> None:
    body = pod("p")
    body["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                hostname_term("NotIn", ["n1", "n2"], 100),
                hostname_term("In", ["n3"], 7),
                {"weight": 0, "preference": {"matchExpressions": []}},  # skipped
            ]
        }
    }
    terms = model.preferred_terms(body)
    assert len(terms) == 2
    assert model.node_affinity(terms, {"kubernetes.io/hostname": "n3"}) == 107
    assert model.node_affinity(terms, {"kubernetes.io/hostname": "n1"}) == 0
    assert model.node_affinity(terms, {}) == 100  # NotIn matches a node without the label, In does not
    assert Requirement("size", "Gt", frozenset({"4"})).matches({"size": "5"})
    assert not Requirement("size", "Lt", frozenset({"4"})).matches({"size": "x"})


def test_taint_toleration_counts_untolerated_prefer_no_schedule_taints() -> None:
    taints = [
        {"key": "a", "value": "1", "effect": "PreferNoSchedule"},
        {"key": "b", "value": "2", "effect": "PreferNoSchedule"},
        {"key": "c", "effect": "NoSchedule"},  # a filter matter, not scored
    ]
    assert model.taint_toleration(taints, []) == 2
    assert model.taint_toleration(taints, [{"key": "a", "operator": "Exists"}]) == 1
    assert model.taint_toleration(taints, [{"key": "b", "value": "2", "effect": "PreferNoSchedule"}]) == 1
    assert model.taint_toleration(taints, [{"key": "b", "value": "3"}]) == 2


def test_hostname_spread_counts_the_workload_pods_and_normalises_against_the_fullest_node() -> None:
    # ln(22) = 3.0910: 13 pods -> 42.18, 24 pods -> 76.18, none -> maxSkew - 1 = 2
    assert [model.hostname_spread(count, 20) for count in (0, 13, 24)] == [2, 42, 76]
    assert model.spread_normalize([2, 42, 76]) == [100, 47, 2]  # 100 x (76 + 2 - s) / 76
    assert model.spread_normalize([0, 0]) == [100, 100]
    assert model.go_round(2.5) == 3 and model.go_round(3.5) == 4 and model.go_round(2.49) == 2


def test_extender_priority_is_scaled_by_weight_and_ten() -> None:
    assert model.extender_score(7, 2) == 140


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (20, 0, 20),
        (99, 0, 99),
        (100, 0, 100),
        (1000, 0, 420),
        (5000, 0, 500),
        (15000, 0, 750),
        (1000, 30, 300),
    ],
)
def test_feasible_node_cap(nodes: int, percentage: int, expected: int) -> None:
    assert model.num_feasible_nodes_to_find(nodes, percentage) == expected


def test_feasible_window_wraps_from_the_start_and_says_how_many_it_processed() -> None:
    fits = [True, False, True, True, False]
    assert model.feasible_window(5, fits.__getitem__, 3, 2) == ([3, 0], 3)
    assert model.feasible_window(5, fits.__getitem__, 1, 9) == ([2, 3, 0], 5)


def test_cluster_search_starts_where_the_last_one_stopped() -> None:
    nodes = [node_state(f"n{i}", Resources()) for i in range(150)]
    cluster = Cluster(nodes)
    first = cluster.feasible(pod_state("100m", "100"))
    assert [n.name for n in first[:2]] == ["n0", "n1"] and len(first) == 100
    second = cluster.feasible(pod_state("100m", "100"))
    assert second[0].name == "n100" and second[50].name == "n0"
    assert cluster.next_start == 50


def test_backoff_doubles_from_one_second_to_ten() -> None:
    assert [model.backoff_duration_ns(count) // S for count in range(7)] == [0, 1, 2, 4, 8, 10, 10]


def test_backoff_expiry_is_truncated_to_its_window_and_completes_in_the_next() -> None:
    expiry = model.backoff_expiry_ns(12 * S + S // 3, 1)  # 13.33 s -> window 13
    assert expiry == 13 * S
    assert not model.backoff_completed(expiry, 13 * S + S // 2)
    assert model.backoff_completed(expiry, 14 * S)


def test_queue_backs_off_by_consecutive_errors_and_orders_by_queue_entry() -> None:
    queue = SchedulingQueue()
    first, second = pod_state("1", "1Mi"), pod_state("1", "1Mi")
    queue.add(first, 1 * S)
    queue.add(second, 2 * S)
    assert queue.pop() is first
    queue.failed(first, 10 * S, error=True)  # 1 s
    assert first.expiry_ns == 11 * S and queue.flush(11 * S + S // 2) == 0
    assert queue.flush(12 * S) == 1
    assert queue.pop() is second and queue.pop() is first  # second entered the queue first
    queue.failed(first, 12 * S + S // 5, error=True)  # a second denial in a row: 2 s, window 14
    assert first.expiry_ns == 14 * S
    assert queue.pop() is None and queue.flush(14 * S + S // 2) == 0
    assert queue.flush(15 * S) == 1 and queue.pop() is first
    queue.failed(first, 20 * S, error=False)  # unschedulable: its own count, errors reset
    assert (first.consecutive_errors, first.unschedulable_count, first.expiry_ns) == (0, 1, 21 * S)


def test_profile_weights_are_the_default_profile_of_the_newest_release() -> None:
    assert profile_weights() == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }


def test_the_trap_wins_on_requests_and_the_hint_outweighs_it() -> None:
    weights = profile_weights()
    trap, other = node_state("trap", Resources()), node_state("other", Resources(2000, 4000))
    plain = pod_state("1", "2000")
    # trap: LeastAllocated 75 + Balanced 75 + TaintToleration 100 x 3; other: 25 + 75 + 300
    assert totals(plain, [trap, other], weights) == [450, 400]
    hinted = pod_state("1", "2000", terms=[hostname_term("NotIn", ["trap"])])
    assert totals(hinted, [trap, other], weights) == [450, 600]  # NodeAffinity 100 x 2
    assert totals(plain, [trap, other], weights, {"trap": 0, "other": 10}) == [450, 500]
    rng = random.Random(0)
    assert choose(plain, [trap, other], weights, rng).name == "trap"
    assert choose(hinted, [trap, other], weights, rng).name == "other"
    assert choose(plain, [other], weights, rng).name == "other"  # alone: not scored


def test_spreading_a_replica_set_can_outweigh_the_hint() -> None:
    weights = profile_weights()
    trap, other = node_state("trap", Resources()), node_state("other", Resources(2000, 4000))
    other.workload_pods = 10  # ln(4) = 1.386: round(13.86 + 2) = 16; the trap: 2
    hinted = pod_state("1", "2000", terms=[hostname_term("NotIn", ["trap"])])
    hinted.body["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "controller": True}]
    hinted.__post_init__()
    assert hinted.workload
    # spread: trap 100 x (16 + 2 - 2) / 16 = 100, other 100 x 2 / 16 = 12; x 2 on 450 and 600
    assert totals(hinted, [trap, other], weights) == [650, 624]


def test_best_effort_pods_skip_balanced_allocation() -> None:
    body = pod("p", containers=[container()])
    best_effort = PodState("default/p", body, 0)
    node = node_state("n", Resources())
    # LeastAllocated with the defaults: cpu (4000-100)*100/4000 = 97, memory 8000 < 200Mi: 0 -> 48
    assert totals(best_effort, [node, node_state("m", Resources())], profile_weights())[0] == 48 + 300


def test_ties_are_broken_among_the_best_only() -> None:
    rng = random.Random(3)
    picks = {model.select_host(["a", "b", "c"], [5, 9, 9], rng) for _ in range(50)}
    assert picks == {"b", "c"}


def test_stranded_counts_pending_pods_some_node_has_room_for() -> None:
    roomy = node_state("roomy", Resources())
    full = node_state("full", Resources())
    full.limits = full.limit_capacity
    fitting = pod_state("1", "1000", limits={"cpu": "2", "memory": "2000"})
    too_big = pod_state("1", "1000", limits={"cpu": "5"})
    assert stranded([fitting, too_big], [roomy, full]) == 1
    assert stranded([fitting], [full]) == 0


def random_node(rng: random.Random, index: int) -> NodeState:
    allocatable = Resources(rng.choice([0, 2000, 4000, 16000]), rng.choice([0, 8000, 64000]))
    node = NodeState(
        f"n{index}",
        {"kubernetes.io/hostname": f"n{index}"},
        allocatable,
        Resources(allocatable.cpu * 3 // 2, allocatable.memory),
        allowed_pods=rng.choice([3, 110]),
        taints=tuple(
            {"key": "k", "value": str(v), "effect": "PreferNoSchedule"} for v in range(rng.randrange(3))
        ),
    )
    node.requested = Resources(rng.randrange(0, 20000), rng.randrange(0, 70000))
    node.non_zero_requested = node.requested + Resources(rng.randrange(0, 500), rng.randrange(0, 500))
    node.limits = Resources(rng.randrange(0, 20000), rng.randrange(0, 70000))
    node.pods = rng.randrange(0, 4)
    node.workload_pods = rng.choice([0, 0, 1, 7, 30])
    return node


def test_the_columns_answer_as_the_scalar_functions_do() -> None:
    rng = random.Random(7)
    for _ in range(40):
        nodes = [random_node(rng, i) for i in range(rng.choice([5, 30, 130]))]
        reference, columns = Cluster(nodes), Columns(nodes)
        start = rng.randrange(len(nodes))
        reference.next_start = columns.next_start = start
        cpu, memory = rng.choice(["0", "100m", "1"]), rng.choice(["0", "1k", "3k"])
        hint = [hostname_term("NotIn", [f"n{i}" for i in range(0, len(nodes), 3)], rng.randrange(1, 101))]
        pending = pod_state(cpu, memory, limits={"cpu": "2"}, terms=hint if rng.random() < 0.5 else None)
        pending.tolerations = ({"key": "k", "value": "1"},) if rng.random() < 0.5 else ()
        pending.workload = rng.random() < 0.5
        expected = reference.feasible(pending)
        found = columns.feasible(pending)
        assert [nodes[i].name for i in found] == [n.name for n in expected]
        assert columns.next_start == reference.next_start
        if expected:
            extender = {n.name: rng.randrange(11) for n in expected}
            weights = profile_weights()
            assert list(columns.totals(pending, found, weights, extender)) == totals(
                pending, expected, weights, extender
            )
        assert columns.stranded([pending]) == stranded([pending], nodes)


def room_term(cpu: int, weight: int = 100) -> dict:
    expression = {"key": "limitguard.io/limit-room-cpu", "operator": "Gt", "values": [str(cpu)]}
    return {"weight": weight, "preference": {"matchExpressions": [expression]}}


def test_the_columns_follow_label_and_taint_changes_and_added_nodes_as_the_scalar_functions_do() -> None:
    """The hint's Gt term read from the numeric label columns, the taint from the PreferNoSchedule
    count, both as nodes are relabelled and added mid-run, equal the per-node reference."""
    rng = random.Random(11)
    nodes = [random_node(rng, i) for i in range(60)]
    for node in nodes:
        node.labels["limitguard.io/limit-room-cpu"] = rng.choice(["0", "999", "1000", "5000", "x", "-1"])
    columns = Columns(nodes)
    hinted = pod_state("100m", "1k", limits={"cpu": "1"}, terms=[room_term(999)])
    weights = profile_weights()
    for step in range(30):
        index = rng.randrange(len(columns.nodes))
        labels = dict(columns.nodes[index].labels)
        labels["limitguard.io/limit-room-cpu"] = rng.choice(
            ["0", "1000", str(2**63 - 1), "99999999999999999999"]
        )
        taints = (
            ({"key": "limitguard.io/limit-full", "effect": "PreferNoSchedule"},) if rng.random() < 0.4 else ()
        )
        columns.set_node(index, labels, taints)
        if step % 10 == 0:
            columns.add_node(random_node(rng, 100 + step))
        candidates = columns.feasible(hinted)
        reference = [columns.nodes[i] for i in candidates]
        if len(reference) > 1:
            assert list(columns.totals(hinted, candidates, weights)) == totals(hinted, reference, weights)
    matched = [model.node_affinity(hinted.terms, n.labels) for n in columns.nodes]
    assert list(columns._affinity_raw(hinted)) == matched and 0 < sum(matched) < 100 * len(matched)
