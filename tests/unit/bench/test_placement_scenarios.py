"""bench.placement's clusters are what docs/benchmarks.md says they are, and the goals are read right."""

from __future__ import annotations

from bench.placement.__main__ import verdict
from bench.placement.columns import Columns
from bench.placement.run import Result, node_states
from bench.placement.scenarios import large, owned, trap
from bench.placement.scheduler import PodState


def test_the_trap_nodes_are_full_by_limits_and_the_lightest_by_requests() -> None:
    scenario = trap(200)
    nodes = node_states(scenario)
    traps = [n for n in nodes if n.limits.cpu == n.limit_capacity.cpu]
    others = [n for n in nodes if n not in traps]
    assert [n.name for n in traps] == ["node-00", "node-04", "node-08", "node-12", "node-16"]
    assert max(n.requested.cpu for n in traps) < min(n.requested.cpu for n in others)
    pod = PodState("placement/x", scenario.pods[0], 0)
    room = [(n.limit_capacity.cpu - n.limits.cpu) // pod.limits.cpu for n in others]
    assert (min(room), max(room), sum(room)) == (16, 24, 300)
    assert len(scenario.pods) == 200 and scenario.burst == 200 and trap(1).burst == 1


def test_the_large_cluster_has_a_fifth_of_its_nodes_full_and_pods_of_three_sizes() -> None:
    scenario = large()
    columns = Columns(node_states(scenario))
    full = (columns.limits[:, 0] == columns.limit_capacity[:, 0]).sum()
    assert len(columns.names) == 1000 and full == 200
    sizes = [pod["metadata"]["labels"]["size"] for pod in scenario.pods]
    assert len(sizes) == 2000 and scenario.burst == 50
    assert 0.55 < sizes.count("small") / 2000 < 0.65 and 0.07 < sizes.count("large") / 2000 < 0.13


def result(scenario: str, mode: str, placed: int, stranded: int, denied: int) -> Result:
    return Result(scenario, mode, 200, placed, stranded, denied, 0, 0, 0, 0, 0.1, 0.2, 1.0)


def test_goals_per_scenario_and_mode() -> None:
    assert verdict(result("a", "hints", 200, 0, 10)) == "met"  # 0.05 per placed pod
    assert verdict(result("a", "hints", 200, 0, 11)) == "MISSED"
    assert verdict(result("b", "hints", 199, 1, 0)) == "MISSED"  # none stranded
    assert verdict(result("c", "hints", 198, 2, 19)) == "met"  # 1 % of 200 stranded, 0.1 per placed
    assert verdict(result("c", "extender", 200, 0, 1)) == "MISSED"
    assert verdict(result("a", "admission", 0, 200, 1200)) == "-"  # no goal: it shows the problem


def test_owned_pods_belong_to_one_replica_set_and_count_as_its_workload() -> None:
    scenario = owned(trap(1))
    pods = [PodState("placement/x", body, 0) for body in scenario.pods]
    assert scenario.workload and all(pod.workload for pod in pods) and len(pods) == 200
    assert not PodState("placement/x", trap(1).pods[0], 0).workload
