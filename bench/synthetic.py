"""Synthetic clusters for benchmarks, built with limitguard.testing.builders like the tests' objects."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from limitguard.core.quantity import to_units
from limitguard.core.roomlabels import NodeRoom, desired_labels
from limitguard.testing.builders import container, namespace, node, pod

ZONES = [f"zone-{index}" for index in range(10)]
# The benches' ratio (bench.admission.CONFIG): the nodes carry the room labels the leader would
# write under it, as in a cluster where placement hints are on (so /mutate answers with a hint).
RATIO = {"cpu": 150, "memory": 150}
ALLOCATABLE = {"cpu": "16", "memory": "64Gi"}


def make_node(index: int) -> dict[str, Any]:
    name = f"node-{index:05d}"
    return node(
        name,
        ALLOCATABLE["cpu"],
        ALLOCATABLE["memory"],
        labels={"kubernetes.io/os": "linux", "topology.kubernetes.io/zone": ZONES[index % len(ZONES)]},
        extra={"ephemeral-storage": "100Gi"},
        uid=f"node-uid-{index}",
    )


def make_pod(index: int, node_name: str | None, rng: random.Random) -> dict[str, Any]:
    limits = {"cpu": rng.choice(["250m", "500m", "1"]), "memory": rng.choice(["256Mi", "512Mi", "1Gi"])}
    return pod(
        f"pod-{index:06d}",
        namespace=f"ns-{index % 50}",
        uid=f"pod-uid-{index}",
        node_name=node_name,
        phase="Running" if node_name else "Pending",
        containers=[container(limits=limits, requests={"cpu": "100m", "memory": "128Mi"})],
    )


def make_cluster(nodes: int, pods: int, pending: int, seed: int = 7) -> dict[str, Any]:
    """A List with *nodes* nodes and *pods* pods, of which *pending* have no node yet."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = [namespace(f"ns-{index}") for index in range(50)]
    items += [make_node(index) for index in range(nodes)]
    bound = pods - pending
    bound_pods = [make_pod(index, f"node-{index % nodes:05d}", rng) for index in range(bound)]
    label_rooms(items[50:], bound_pods)
    items += bound_pods
    items += [make_pod(bound + index, None, rng) for index in range(pending)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def label_rooms(nodes: list[dict[str, Any]], bound: list[dict[str, Any]]) -> None:
    """Each node's limitguard.io/limit-room-* labels under RATIO (the pods' limits summed)."""
    used: dict[str, dict[str, int]] = {}
    for item in bound:
        sums = used.setdefault(item["spec"]["nodeName"], {"cpu": 0, "memory": 0})
        for entry in item["spec"]["containers"]:
            for resource, quantity in entry["resources"]["limits"].items():
                sums[resource] += to_units(resource, quantity)
    for item in nodes:
        sums = used.get(item["metadata"]["name"], {"cpu": 0, "memory": 0})
        rooms = {
            resource: NodeRoom(to_units(resource, ALLOCATABLE[resource]) * percent // 100 - sums[resource], 0)
            for resource, percent in RATIO.items()
        }
        item["metadata"]["labels"].update(desired_labels(rooms))


def write_cluster(path: Path, nodes: int, pods: int, pending: int) -> list[dict[str, Any]]:
    """Write a synthetic cluster to *path* (a JSON List); the metadata of its pending pods."""
    cluster = make_cluster(nodes, pods, pending)
    path.write_bytes(orjson.dumps(cluster))
    return [
        item["metadata"]
        for item in cluster["items"]
        if item["kind"] == "Pod" and not item["spec"].get("nodeName")
    ]
