"""Scorers against hand-computed numbers and the score tables of the design documents."""

from limitguard.core.podrules import DEFAULT_RULES
from limitguard.core.scoring import NodeFacts, PodFacts, ScorerConfig, score_candidates
from limitguard.core.scoring.fitplus import (
    FitPlusArgs,
    ResourceStrategy,
    Strategy,
    fit_plus_scorer,
    least_allocated,
    most_allocated,
)
from limitguard.core.scoring.limitaware import LimitAwareArgs, limit_aware_scorer
from limitguard.core.scoring.normalize import min_max_normalise, to_extender_priority, trunc_div
from limitguard.core.scoring.podstate import pod_state_raw
from limitguard.core.scoring.scarce import resource_types, scarce_resource_score

GiB = 1024**3
CORES = 1000  # millicores per core
BOTH = {"cpu": 1, "memory": 1}
FULL_RATIO = {"cpu": 100, "memory": 100}


# -- normalisation and weighting ---------------------------------------------------------------
def test_division_truncates_toward_zero_like_go():
    assert trunc_div(-35, 2) == -17  # Python's // would give -18
    assert trunc_div(35, -2) == -17
    assert trunc_div(7, 2) == 3
    assert trunc_div(-300000, 4000) == -75


def test_min_max_tables_of_the_podstate_plugin():
    # scheduler-plugins PodState test table: raw = terminating - nominated
    assert min_max_normalise([6, 3, 0]) == [100, 50, 0]
    assert min_max_normalise([-2, -1, 0]) == [0, 50, 100]
    assert min_max_normalise([3, 2]) == [100, 0]
    assert min_max_normalise([1, 2]) == [0, 100]
    assert min_max_normalise([5, 2, 1, -1]) == [100, 50, 33, 0]  # 3*100/6 = 50, 2*100/6 = 33


def test_all_equal_raw_scores_normalise_to_zero_and_empty_stays_empty():
    assert min_max_normalise([7, 7, 7]) == [0, 0, 0]
    assert min_max_normalise([-40]) == [0]
    assert min_max_normalise([]) == []


def test_extender_scale():
    assert [to_extender_priority(s) for s in (0, 9, 10, 55, 99, 100, 150, -5)] == [0, 0, 1, 5, 9, 10, 10, 0]


def limit_aware_raw(pod_limits, allocatable, allocated, ratios, weights):
    """One node's raw LimitAware score through the scorer the extender prepares per pod."""
    return limit_aware_scorer(pod_limits, weights)(allocatable, allocated, ratios)


def fit_plus_score(pod_types, pod_requests, node_requested, allocatable, resources):
    """One node's FitPlus score through the scorer the extender prepares per pod."""
    return fit_plus_scorer(pod_types, pod_requests, resources)(node_requested, allocatable)


# -- LimitAware ----------------------------------------------------------------------------------
def test_limit_aware_least_allocated_table_of_the_reference_plugin():
    # Koordinator LimitAware scoring test "LeastAllocated": ratio 100%, cpu and memory weight 1.
    # pod 1000 cores / 2000 bytes; node1 4000 cores / 10000 with 2000 / 4000 allocated.
    pod = {"cpu": 1000 * CORES, "memory": 2000}
    node1 = limit_aware_raw(
        pod, {"cpu": 4000 * CORES, "memory": 10000}, {"cpu": 2000 * CORES, "memory": 4000}, FULL_RATIO, BOTH
    )
    node2 = limit_aware_raw(
        pod, {"cpu": 6000 * CORES, "memory": 10000}, {"cpu": 1000 * CORES, "memory": 2000}, FULL_RATIO, BOTH
    )
    # node1: cpu (4000-3000)*100/4000 = 25, memory (10000-6000)*100/10000 = 40 -> 65/2 = 32
    # node2: cpu (6000-2000)*100/6000 = 66, memory (10000-4000)*100/10000 = 60 -> 126/2 = 63
    assert (node1, node2) == (32, 63)
    assert min_max_normalise([node1, node2]) == [0, 100]


def test_limit_aware_negative_raw_score_when_the_node_is_past_its_capacity():
    # Koordinator test "Negative Score when allocated limit > allocatable limit"
    pod = {"cpu": 1000 * CORES, "memory": 2000}
    raw = [
        limit_aware_raw(
            pod,
            {"cpu": 4000 * CORES, "memory": 10000},
            {"cpu": 6000 * CORES, "memory": 4000},
            FULL_RATIO,
            BOTH,
        ),
        limit_aware_raw(
            pod,
            {"cpu": 6000 * CORES, "memory": 10000},
            {"cpu": 1000 * CORES, "memory": 2000},
            FULL_RATIO,
            BOTH,
        ),
        limit_aware_raw(
            pod,
            {"cpu": 6000 * CORES, "memory": 10000},
            {"cpu": 2000 * CORES, "memory": 2000},
            FULL_RATIO,
            BOTH,
        ),
    ]
    # node1: cpu (4000-7000)*100/4000 = -75, memory 40 -> -35/2 = -17 (toward zero)
    # node3: cpu (6000-3000)*100/6000 = 50, memory 60 -> 55
    assert raw == [-17, 63, 55]
    assert min_max_normalise(raw) == [0, 100, 90]  # (55+17)*100/80 = 90


def test_limit_aware_design_story_one_prefers_the_node_whose_limits_are_not_oversubscribed():
    # Proposal story 1: 8 cpu each; node1 limits 6+4, node2 3+2; pod5 limit 4; ratio 125% -> capacity 10
    pod = {"cpu": 4 * CORES}
    ratio, weights, allocatable = {"cpu": 125}, {"cpu": 1}, {"cpu": 8 * CORES}
    node1 = limit_aware_raw(pod, allocatable, {"cpu": 10 * CORES}, ratio, weights)
    node2 = limit_aware_raw(pod, allocatable, {"cpu": 5 * CORES}, ratio, weights)
    assert (node1, node2) == (-40, 10)  # (10-14)*100/10, (10-9)*100/10
    assert min_max_normalise([node1, node2]) == [0, 100]


def test_limit_aware_counts_only_resources_with_a_ratio_and_a_capacity():
    pod = {"cpu": 1 * CORES, "memory": GiB}
    # memory has no ratio on this node -> only cpu counts: (10-3)*100/10 = 70
    assert (
        limit_aware_raw(pod, {"cpu": 10 * CORES, "memory": 8 * GiB}, {"cpu": 2 * CORES}, {"cpu": 100}, BOTH)
        == 70
    )
    # zero capacity (no allocatable) is skipped too; nothing left -> 0
    assert limit_aware_raw(pod, {"memory": 8 * GiB}, {}, {"cpu": 100}, {"cpu": 1}) == 0
    # capacity 10 x 150% = 15; (15-3)*100/15 = 80
    assert limit_aware_raw(pod, {"cpu": 10 * CORES}, {"cpu": 2 * CORES}, {"cpu": 150}, {"cpu": 3}) == 80


def test_limit_aware_extended_resource_with_weights():
    # gpu weight 3, cpu weight 1: gpu (8-3)*100/8 = 62, cpu (16-4)*100/16 = 75 -> (186+75)/4 = 65
    raw = limit_aware_raw(
        {"nvidia.com/gpu": 1, "cpu": 2 * CORES},
        {"nvidia.com/gpu": 8, "cpu": 16 * CORES},
        {"nvidia.com/gpu": 2, "cpu": 2 * CORES},
        {"nvidia.com/gpu": 100, "cpu": 100},
        {"nvidia.com/gpu": 3, "cpu": 1},
    )
    assert raw == 65


# -- NodeResourcesFitPlus --------------------------------------------------------------------------
DESIGN_ARGS = {  # the design document's example configuration
    "nvidia.com/gpu": ResourceStrategy(Strategy.MOST_ALLOCATED, 2),
    "cpu": ResourceStrategy(Strategy.LEAST_ALLOCATED, 1),
    "memory": ResourceStrategy(Strategy.LEAST_ALLOCATED, 1),
}
GPU_NODE = {"cpu": 96 * CORES, "memory": 512 * GiB, "nvidia.com/gpu": 8, "pods": 110}


def test_fit_plus_design_example_gpu_pod_packs_gpus_and_spreads_cpu():
    requested = {"cpu": 16 * CORES, "memory": 32 * GiB, "nvidia.com/gpu": 4}
    pod = {"cpu": 8 * CORES, "memory": 16 * GiB, "nvidia.com/gpu": 2}
    # gpu MostAllocated 6*100/8 = 75 (x2); cpu LeastAllocated (96-24)*100/96 = 75;
    # memory LeastAllocated (512-48)*100/512 = 90 -> (150 + 75 + 90) / 4 = 78
    assert fit_plus_score(pod, pod, requested, GPU_NODE, DESIGN_ARGS) == 78
    # a cpu-only pod is not scored on gpus it does not request: (75 + 90) / 2 = 82
    cpu_pod = {"cpu": 8 * CORES, "memory": 16 * GiB}
    assert fit_plus_score(cpu_pod, cpu_pod, requested, GPU_NODE, DESIGN_ARGS) == 82
    # the gpu pod on a node without gpus: MostAllocated of nothing is 0 -> (0 + 75 + 90) / 4 = 41
    no_gpu_node = {"cpu": 96 * CORES, "memory": 512 * GiB}
    assert fit_plus_score(pod, pod, requested, no_gpu_node, DESIGN_ARGS) == 41


def test_fit_plus_strategy_edges():
    assert most_allocated(12, 10) == 100  # capped at allocatable
    assert least_allocated(12, 10) == 0  # over allocatable
    assert most_allocated(5, 0) == least_allocated(5, 0) == 0
    assert (most_allocated(3, 8), least_allocated(3, 8)) == (37, 62)


def test_fit_plus_pod_requesting_no_configured_resource_scores_max():
    assert fit_plus_score(["ephemeral-storage"], {"ephemeral-storage": 1}, {}, GPU_NODE, DESIGN_ARGS) == 100
    assert fit_plus_score([], {}, {}, GPU_NODE, DESIGN_ARGS) == 100


def test_fit_plus_uses_non_zero_default_requests_of_the_pod():
    # one container without cpu/memory requests or limits, one with cpu 1: the pod really requests
    # only cpu, so memory is not scored; cpu counts 1 + 100m (the default of the other container),
    # memory 200Mi per container (neither sets it)
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1"}}},
            {"name": "b"},
        ]
    }
    facts = PodFacts.from_spec(spec, None, DEFAULT_RULES)
    assert facts.types == frozenset({"cpu"})
    assert facts.requests == {"cpu": 1100, "memory": 2 * 200 * 1024**2}
    node = {"cpu": 4 * CORES, "memory": 8 * GiB}
    # cpu LeastAllocated (4000 - (900 + 1100)) * 100 / 4000 = 50
    assert fit_plus_score(facts.types, facts.requests, {"cpu": 900}, node, FitPlusArgs().resources) == 50


# -- ScarceResourceAvoidance --------------------------------------------------------------------------
def test_scarce_resource_table_of_the_reference_plugin():
    # Koordinator test: scarce [nvidia.com/gpu]; pod requests cpu 16, memory 32Gi
    scarce = frozenset({"nvidia.com/gpu"})
    pod_types = resource_types({"cpu": 16 * CORES, "memory": 32 * GiB})
    node1 = resource_types({"cpu": 96 * CORES, "memory": 512 * GiB, "nvidia.com/gpu": 8, "xx.xx/xx": 8})
    node2 = resource_types({"cpu": 96 * CORES, "memory": 512 * GiB})
    # node1 leftover {gpu, xx.xx/xx}, one scarce -> (2-1)*100/2 = 50; node2 leftover empty -> 100
    assert scarce_resource_score(node1, pod_types, scarce) == 50
    assert scarce_resource_score(node2, pod_types, scarce) == 100


def test_scarce_resource_edges():
    scarce = frozenset({"nvidia.com/gpu"})
    # `pods` and zero amounts are no resource types; hugepages and ephemeral-storage are
    node = resource_types(
        {
            "cpu": 1,
            "memory": 1,
            "pods": 110,
            "nvidia.com/gpu": 4,
            "hugepages-2Mi": 2,
            "ephemeral-storage": 1,
            "x.io/z": 0,
        }
    )
    assert node == {"cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage"}
    # pod cpu+memory: leftover {gpu, hugepages, ephemeral} with one scarce -> 2*100/3 = 66
    assert scarce_resource_score(node, {"cpu", "memory"}, scarce) == 66
    # a pod that requests the gpu leaves nothing scarce over -> 100
    assert scarce_resource_score(node, {"cpu", "memory", "nvidia.com/gpu"}, scarce) == 100
    # only scarce left over -> 0
    assert scarce_resource_score(frozenset({"cpu", "nvidia.com/gpu"}), {"cpu"}, scarce) == 0


# -- PodState and the combination ---------------------------------------------------------------------
def _node(name, terminating=0, nominated=0, allocated_cpu=0, ratio=None):
    return NodeFacts(
        name=name,
        allocatable={"cpu": 8 * CORES, "memory": 32 * GiB},
        ratio_override=ratio,
        limits_allocated={"cpu": allocated_cpu},
        requested={},
        terminating=terminating,
        nominated=nominated,
    )


def test_pod_state_raw_is_terminating_minus_nominated():
    assert pod_state_raw(5, 2) == 3
    assert pod_state_raw(0, 1) == -1


def test_weighted_combination_of_limit_aware_and_pod_state():
    pod = PodFacts(limits={"cpu": 4 * CORES}, requests={}, types=frozenset())
    nodes = [
        _node("node1", terminating=2, allocated_cpu=10 * CORES),
        _node("node2", nominated=1, allocated_cpu=5 * CORES),
        _node("node3", allocated_cpu=6 * CORES),
    ]
    scorers = [
        ScorerConfig("LimitAware", 2, LimitAwareArgs(weights={"cpu": 1})),
        ScorerConfig("PodState", 1),
        ScorerConfig("ScarceResourceAvoidance", 0),  # shown, not counted
    ]
    sheet = score_candidates(pod, nodes, scorers, {"cpu": 125})
    limit_aware, pod_state, scarce_column = sheet.columns
    # capacity 10: raw (10-14)*100/10 = -40, (10-9)*100/10 = 10, (10-10)*100/10 = 0 -> spread 50
    assert limit_aware.raw == [-40, 10, 0]
    assert limit_aware.scores == [0, 100, 80]
    assert pod_state.raw == [2, -1, 0] and pod_state.scores == [100, 0, 33]
    assert scarce_column.scores == [100, 100, 100]
    # (0*2 + 100)/3 = 33, (200 + 0)/3 = 66, (160 + 33)/3 = 64 -> 3, 6, 6 on the 0..10 scale
    assert sheet.totals == [33, 66, 64]
    assert sheet.priorities == [3, 6, 6]


def test_limit_aware_args_default_ratio_and_node_annotation():
    pod = PodFacts(limits={"cpu": 2 * CORES}, requests={}, types=frozenset())
    nodes = [_node("a", allocated_cpu=4 * CORES), _node("b", allocated_cpu=4 * CORES, ratio={"cpu": 200})]
    scorer = ScorerConfig("LimitAware", 1, LimitAwareArgs(weights={"cpu": 1}, default_ratios={"cpu": 100}))
    sheet = score_candidates(pod, nodes, [scorer], {"cpu": 150})
    # args' default 100% replaces limitguard's 150% -> a: (8-6)*100/8 = 25; the annotation wins on b:
    # capacity 16 -> (16-6)*100/16 = 62
    assert sheet.columns[0].raw == [25, 62]


def test_no_counted_scorer_gives_zero():
    pod = PodFacts(limits={}, requests={}, types=frozenset())
    sheet = score_candidates(pod, [_node("a"), _node("b")], [ScorerConfig("PodState", 0)], {})
    assert sheet.totals == [0, 0] and sheet.priorities == [0, 0]
