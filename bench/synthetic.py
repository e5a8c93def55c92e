"""Synthetic clusters for benchmarks: kubectl-shaped Nodes, Pods and Namespaces."""

from __future__ import annotations

import random
from typing import Any

ZONES = [f"zone-{index}" for index in range(10)]


def make_node(index: int) -> dict[str, Any]:
    name = f"node-{index:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"node-uid-{index}",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": ZONES[index % len(ZONES)],
            },
        },
        "spec": {},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "100Gi"}
        },
    }


def make_pod(index: int, node_name: str | None, rng: random.Random) -> dict[str, Any]:
    cpu = rng.choice(["250m", "500m", "1"])
    memory = rng.choice(["256Mi", "512Mi", "1Gi"])
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{index:06d}", "namespace": f"ns-{index % 50}", "uid": f"pod-uid-{index}"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "limits": {"cpu": cpu, "memory": memory},
                    },
                }
            ]
        },
        "status": {"phase": "Running" if node_name else "Pending"},
    }
    if node_name:
        pod["spec"]["nodeName"] = node_name
    return pod


def make_cluster(nodes: int, pods: int, pending: int, seed: int = 7) -> dict[str, Any]:
    """A List with *nodes* nodes and *pods* pods, of which *pending* have no node yet."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{index}"}} for index in range(50)
    ]
    items += [make_node(index) for index in range(nodes)]
    bound = pods - pending
    items += [make_pod(index, f"node-{index % nodes:05d}", rng) for index in range(bound)]
    items += [make_pod(bound + index, None, rng) for index in range(pending)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
