"""The clusters and their pods, as plain objects (what the fake apiserver stores).

Every node has 16 cpu, 64Gi and room for 110 pods; limitguard's ratio is 100 % for cpu and memory,
so a node's limit capacity is its allocatable. A *trap* node holds one pod requesting 1 cpu / 2Gi
and limited to 16 cpu / 8Gi: full by limits, the lightest by requests. Every other node holds one
Guaranteed pod of 4 to 8 cpu (4Gi of memory per cpu): heavier by requests, with room for limits.
In (e) every node holds a pod leaving room by limits for 1 to 3 of the pods created, and plenty by
requests. The pods created have requests and limits (Burstable) and no owner, so kube-scheduler's system
default topology spreading (which needs a Service or a ReplicaSet selecting the pod) does not apply;
`owned` gives them one ReplicaSet, and then it does, in kube-scheduler and in the model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from limitguard.core.quantity import to_units
from limitguard.core.roomlabels import FULL_TAINT, FullThreshold, NodeRoom, desired_labels, wants_full_taint
from limitguard.testing.builders import container, make_namespace, node, pod

NAMESPACE = "placement"
RATIO = {"cpu": 100, "memory": 100}
SIZES = {  # name: (requests cpu, memory; limits cpu, memory)
    "small": ("250m", "512Mi", "500m", "1Gi"),
    "medium": ("500m", "1Gi", "1", "2Gi"),
    "large": ("1", "2Gi", "2", "4Gi"),
}


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    nodes: list[dict[str, Any]]
    bound: list[dict[str, Any]]  # the pods already running on them
    pods: list[dict[str, Any]]  # the pods to create, in order
    burst: int  # pods created together before the scheduler sees any of them
    workload: bool = False  # the pods belong to one ReplicaSet
    added: list[dict[str, Any]] = field(default_factory=list)  # nodes added during the run
    add_after: int = 0  # ... once this many pods were created


def owned(scenario: Scenario) -> Scenario:
    """The same pods, controlled by one ReplicaSet: kube-scheduler then spreads them over the nodes
    (PodTopologySpread's system default constraints), and the model does too."""
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "placement-bench",
        "uid": "rs-placement-bench",
    }
    pods = []
    for pod_object in scenario.pods:
        copy = {
            **pod_object,
            "metadata": {**pod_object["metadata"], "ownerReferences": [{**owner, "controller": True}]},
        }
        pods.append(copy)
    return replace(scenario, pods=pods, workload=True, title=scenario.title + ", one ReplicaSet")


def sized_pod(name: str, size: str) -> dict[str, Any]:
    cpu, memory, cpu_limit, memory_limit = SIZES[size]
    built = pod(
        name,
        namespace=NAMESPACE,
        phase="Pending",
        containers=[
            container(
                limits={"cpu": cpu_limit, "memory": memory_limit}, requests={"cpu": cpu, "memory": memory}
            )
        ],
    )
    built["metadata"]["labels"] = {"app": "placement-bench", "size": size}
    return built


def _cluster(count: int, trap: set[int]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    width = len(str(count - 1))
    nodes, bound = [], []
    for index in range(count):
        name = f"node-{index:0{width}d}"
        nodes.append(node(name, "16", "64Gi"))
        if index in trap:
            resources = container(
                limits={"cpu": "16", "memory": "8Gi"}, requests={"cpu": "1", "memory": "2Gi"}
            )
        else:
            cpu = 4 + index * 7 % 5
            amount = {"cpu": str(cpu), "memory": f"{4 * cpu}Gi"}
            resources = container(limits=amount, requests=dict(amount))
        bound.append(pod(f"base-{name}", namespace=NAMESPACE, node_name=name, containers=[resources]))
    return nodes, bound


def trap(burst: int) -> Scenario:
    """(a) and (b): 20 nodes, every fourth a trap (5), 200 small pods; the other 15 have room for
    16 to 24 of them each (300 in all)."""
    nodes, bound = _cluster(20, {0, 4, 8, 12, 16})
    pods = [sized_pod(f"web-{index:03d}", "small") for index in range(200)]
    name, title = ("a", "one at a time") if burst == 1 else ("b", "one burst of 200")
    return Scenario(name, f"20 nodes, 5 traps, 200 pods, {title}", nodes, bound, pods, burst)


def large(seed: int = 1) -> Scenario:
    """(c): 1,000 nodes, every fifth a trap (200), 2,000 pods of mixed sizes (60 % small, 30 %
    medium, 10 % large), created in bursts of 50."""
    nodes, bound = _cluster(1000, set(range(0, 1000, 5)))
    rng = random.Random(seed)
    sizes = rng.choices(list(SIZES), weights=[6, 3, 1], k=2000)
    pods = [sized_pod(f"job-{index:04d}", size) for index, size in enumerate(sizes)]
    return Scenario("c", "1,000 nodes, 200 traps, 2,000 mixed pods in bursts of 50", nodes, bound, pods, 50)


def autoscaled(seed: int = 1) -> Scenario:
    """(d): (c), and 100 empty nodes added once half of the pods were created, as an autoscaler
    adds them: unlabelled at first, then labelled by limitguard's leader."""
    base = large(seed)
    added = [node(f"node-{index:04d}", "16", "64Gi") for index in range(1000, 1100)]
    return replace(
        base,
        name="d",
        title="(c) and 100 nodes added half-way",
        added=added,
        add_after=len(base.pods) // 2,
    )


def little_room() -> Scenario:
    """(e): 100 nodes with room by limits for 1 to 3 small pods each (199 in all) and for 60 by
    requests; 199 small pods in one burst. Every room is some node's last, so a filter that has not
    yet counted the binding before it sends the next pod to a node that has just filled."""
    nodes, bound = [], []
    for index in range(100):
        name = f"node-{index:02d}"
        room = 1 + index % 3  # small pods (limit 500m) that fit by limits
        nodes.append(node(name, "16", "64Gi"))
        resources = container(
            limits={"cpu": f"{16000 - 500 * room}m", "memory": "8Gi"}, requests={"cpu": "1", "memory": "2Gi"}
        )
        bound.append(pod(f"base-{name}", namespace=NAMESPACE, node_name=name, containers=[resources]))
    pods = [sized_pod(f"tight-{index:03d}", "small") for index in range(199)]
    title = "100 nodes with room for 1 to 3 pods each, 199 pods in one burst"
    return Scenario("e", title, nodes, bound, pods, len(pods))


SCENARIOS = {"a": lambda: trap(1), "b": lambda: trap(200), "c": large, "d": autoscaled, "e": little_room}


def labelled(
    nodes: list[dict[str, Any]], bound: list[dict[str, Any]], avoid: FullThreshold | None
) -> list[dict[str, Any]]:
    """*nodes* carrying the room labels (and, with *avoid*, the taint) limitguard's leader keeps
    under RATIO, from the limits of the *bound* pods: a cluster where it has run a while, so the
    run measures the steady state and not the first labelling of every node."""
    used: dict[str, dict[str, int]] = {}
    for item in bound:
        sums = used.setdefault(item["spec"]["nodeName"], {})
        for entry in item["spec"]["containers"]:
            for resource, quantity in (entry["resources"].get("limits") or {}).items():
                sums[resource] = sums.get(resource, 0) + to_units(resource, quantity)
    result = []
    for item in nodes:
        allocatable = item["status"]["allocatable"]
        sums = used.get(item["metadata"]["name"], {})
        rooms = {}
        for resource, percent in RATIO.items():
            capacity = to_units(resource, allocatable[resource]) * percent // 100
            rooms[resource] = NodeRoom(capacity - sums.get(resource, 0), capacity)
        copy = {
            **item,
            "metadata": {
                **item["metadata"],
                "labels": {**item["metadata"]["labels"], **desired_labels(rooms)},
            },
        }
        if avoid is not None and wants_full_taint(False, rooms.values(), avoid):
            copy["spec"] = {
                **item.get("spec", {}),
                "taints": [*item.get("spec", {}).get("taints", ()), dict(FULL_TAINT)],
            }
        result.append(copy)
    return result


def namespace() -> dict[str, Any]:
    return make_namespace(NAMESPACE)
