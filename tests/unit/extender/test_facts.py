"""Scoring amounts of pods (non-zero defaults) and the per-node sums the state keeps for them."""

from limitguard.core.podlimits import pod_amounts, pod_limits, pod_requests
from limitguard.core.podrules import DEFAULT_RULES
from limitguard.core.scoring.limitaware import limit_aware_scorer
from limitguard.state.store import ClusterState
from tests.support import container, node, pod

MiB = 1024**2


def test_request_wins_over_limit_and_limit_stands_in_for_a_missing_request():
    spec = {"containers": [container(limits={"cpu": "2", "memory": "1Gi"}, requests={"cpu": "500m"})]}
    assert pod_requests(spec, rules=DEFAULT_RULES) == {"cpu": 500, "memory": 1024**3}


def test_non_zero_defaults_apply_per_container_that_sets_neither_and_explicit_zero_stays_zero():
    spec = {
        "containers": [
            container("a", requests={"cpu": "0"}),  # explicit 0 cpu; memory unset -> 200Mi
            container("b"),  # nothing -> 100m, 200Mi
            container("c", limits={"memory": "1Gi"}),  # memory from the limit; cpu unset -> 100m
        ]
    }
    assert pod_requests(spec, rules=DEFAULT_RULES) == {
        "memory": 1024**3
    }  # c's limit stands in; the explicit 0 drops out
    assert pod_requests(spec, non_zero=True, rules=DEFAULT_RULES) == {
        "cpu": 200,
        "memory": 400 * MiB + 1024**3,
    }
    assert pod_amounts(spec, None, DEFAULT_RULES).scoring_limits == {
        "cpu": 200,
        "memory": 400 * MiB + 1024**3,
    }
    assert pod_limits(spec, None, DEFAULT_RULES) == {"memory": 1024**3}  # filtering never sees the defaults


def test_requests_follow_the_sidecar_rule_and_add_overhead():
    sidecar = container("proxy", requests={"cpu": "200m", "memory": "64Mi"}, restartPolicy="Always")
    late_init = container("migrate", requests={"cpu": "1", "memory": "64Mi"})
    spec = {
        "containers": [container(requests={"cpu": "500m", "memory": "128Mi"})],
        "initContainers": [sidecar, late_init],
        "overhead": {"cpu": "50m"},
    }
    # long running 500m + 200m = 700m; init peak 1 + 200m = 1.2 -> max 1.2 + overhead 50m
    assert pod_requests(spec, rules=DEFAULT_RULES) == {"cpu": 1250, "memory": 192 * MiB}


def test_state_keeps_requested_sums_and_pod_state_counts_incrementally():
    state = ClusterState()
    state.upsert_node(node("n1"))
    state.upsert_pod(
        pod(
            "a",
            node_name="n1",
            containers=[container(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2"})],
        )
    )
    state.upsert_pod(pod("b", node_name="n1", containers=[container()]))  # best effort: 100m / 200Mi
    assert state.requested("n1") == {"cpu": 1100, "memory": 1024**3 + 200 * MiB}
    # scoring limits: a -> cpu 2, memory 1Gi (request stands in); b -> the defaults
    assert state.scoring_allocated("n1") == {"cpu": 2100, "memory": 1024**3 + 200 * MiB}
    assert state.committed("n1") == {"cpu": 2000, "memory": 1024**3}  # real limits unchanged

    terminating = pod(
        "a",
        node_name="n1",
        containers=[container(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2"})],
    )
    terminating["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    state.upsert_pod(terminating)
    nominated = pod("p", containers=[container(requests={"cpu": "1"})])
    nominated["status"]["nominatedNodeName"] = "n1"
    state.upsert_pod(nominated)
    assert (state.terminating_pods("n1"), state.nominated_pods("n1")) == (1, 1)
    assert state.requested("n1")["cpu"] == 1100  # an update replaces, never adds twice

    state.upsert_pod({**terminating, "status": {"phase": "Succeeded"}})  # terminal: nothing counts
    state.remove_pod("default/p")
    assert (state.terminating_pods("n1"), state.nominated_pods("n1")) == (0, 0)
    assert state.requested("n1") == {"cpu": 100, "memory": 200 * MiB}


def test_scoring_allocated_includes_the_ledger():
    state = ClusterState()
    state.upsert_node(node("n1"))
    state.ledger.reserve("n1", "default/x", {"cpu": 3000})
    assert state.scoring_allocated("n1") == {"cpu": 3000}


def test_thousand_best_effort_pods_count_at_the_non_zero_default():
    # Koordinator LimitAware test "nonZero when not-set": 1000 pods with memory explicitly 0 and cpu
    # unset each count 100m cpu; node1 4000 cores / 10000 bytes at ratio 100%.
    state = ClusterState()
    state.upsert_node(node("node1", cpu="4000", memory="10000"))
    state.upsert_pod(
        pod("pod-1", node_name="node1", containers=[container(requests={"cpu": "2000", "memory": "4000"})])
    )
    for index in range(1000):
        state.upsert_pod(
            pod(f"be-{index}", node_name="node1", containers=[container(requests={"memory": "0"})])
        )
    allocated = state.scoring_allocated("node1")
    assert allocated == {"cpu": 2_100_000, "memory": 4000}
    raw = limit_aware_scorer({"cpu": 1_000_000, "memory": 2000}, {"cpu": 1, "memory": 1})(
        state.node("node1").allocatable, allocated, {"cpu": 100, "memory": 100}
    )
    assert raw == 31  # cpu (4000-3100)*100/4000 = 22, memory 40 -> 62/2


def test_pods_with_equal_amounts_share_one_dict():
    state = ClusterState()
    first = state.upsert_pod(
        pod("a", node_name="n", containers=[container(requests={"cpu": "100m"}, limits={"cpu": "1"})])
    )
    second = state.upsert_pod(
        pod("b", node_name="n", containers=[container(requests={"cpu": "100m"}, limits={"cpu": "1"})])
    )
    assert first.requests is second.requests
    # limits already carry cpu and memory is the default on both: shared as well
    assert first.scoring_limits is second.scoring_limits
