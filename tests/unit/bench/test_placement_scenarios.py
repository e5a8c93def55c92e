"""bench.placement's clusters are what docs/benchmarks.md says they are, and the goals are read right."""

from __future__ import annotations

from bench.placement.__main__ import verdict
from bench.placement.columns import Columns
from bench.placement.run import Result, node_states
from bench.placement.scenarios import large, little_room, owned, trap
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


def test_little_room_gives_every_pod_a_last_room_and_requests_to_spare() -> None:
    scenario = little_room()
    nodes = node_states(scenario)
    pod = PodState("placement/x", scenario.pods[0], 0)
    room = [(n.limit_capacity.cpu - n.limits.cpu) // pod.limits.cpu for n in nodes]
    assert len(nodes) == 100 and (min(room), max(room)) == (1, 3)
    assert sum(room) == len(scenario.pods) == scenario.burst == 199  # every room taken, in one burst
    by_requests = [(n.allocatable.cpu - n.requested.cpu) // pod.requests.cpu for n in nodes]
    assert min(by_requests) == 60  # requests never decide: 15 cpu free, 250m each


def result(scenario: str, mode: str, placed: int, stranded: int, denied: int, **more) -> Result:
    return Result(scenario, mode, 200, placed, stranded, denied, 0, 0, 0, 0, 0.1, 0.2, 1.0, **more)


def test_goals_per_scenario_and_mode() -> None:
    assert verdict(result("a", "hints", 200, 0, 10)) == "met"  # 0.05 per placed pod
    assert verdict(result("a", "hints", 200, 0, 11)) == "MISSED"
    assert verdict(result("b", "hints", 199, 1, 0)) == "MISSED"  # none stranded
    assert verdict(result("c", "hints", 200, 0, 10, node_writes=200, bindings=200)) == "met"
    assert (
        verdict(result("c", "hints", 200, 0, 0, node_writes=201, bindings=200)) == "MISSED"
    )  # > 1 a binding
    assert verdict(result("c", "hints", 200, 0, 0, over_rate=1)) == "MISSED"  # past the rate once
    assert verdict(result("d", "hints", 200, 0, 0)) == "MISSED"  # nothing placed on the added nodes
    assert verdict(result("d", "hints", 200, 0, 0, placed_on_added=3)) == "met"
    assert verdict(result("c", "hints-avoid", 200, 0, 10, workload=True)) == "met"
    assert verdict(result("c", "hints", 190, 10, 100, workload=True)) == "-"  # shows why avoid exists
    assert verdict(result("c", "extender", 200, 0, 1)) == "MISSED"
    assert verdict(result("a", "admission", 0, 200, 1200)) == "-"  # no goal: it shows the problem


def test_nodes_are_labelled_as_the_leader_would_before_the_run() -> None:
    from bench.placement.scenarios import autoscaled, labelled
    from limitguard.core.roomlabels import FULL_TAINT, FullThreshold

    scenario = trap(1)
    nodes = {n["metadata"]["name"]: n for n in labelled(scenario.nodes, scenario.bound, FullThreshold(10, 5))}
    trap_node, other = nodes["node-00"], nodes["node-01"]
    assert trap_node["metadata"]["labels"]["limitguard.io/limit-room-cpu"] == "0"
    assert trap_node["spec"]["taints"] == [FULL_TAINT]  # full by limits: tainted
    # node-01 holds a Guaranteed pod of 4 + 1 x 7 % 5 = 6 cpu (24Gi): 10 cpu and 40Gi left
    assert other["metadata"]["labels"]["limitguard.io/limit-room-cpu"] == "10000"
    assert other["metadata"]["labels"]["limitguard.io/limit-room-memory"] == str(40 * 1024)
    assert not other.get("spec", {}).get("taints")
    assert "taints" not in labelled(scenario.nodes, scenario.bound, None)[0].get("spec", {})
    added = autoscaled()
    assert len(added.added) == 100 and added.add_after == 1000
    assert not any("limitguard.io/limit-room-cpu" in n["metadata"]["labels"] for n in added.added)


def test_owned_pods_belong_to_one_replica_set_and_count_as_its_workload() -> None:
    scenario = owned(trap(1))
    pods = [PodState("placement/x", body, 0) for body in scenario.pods]
    assert scenario.workload and all(pod.workload for pod in pods) and len(pods) == 200
    assert not PodState("placement/x", trap(1).pods[0], 0).workload
