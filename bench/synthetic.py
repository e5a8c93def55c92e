"""Synthetic clusters for benchmarks, built with limitguard.testing.builders like the tests' objects."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from limitguard.testing.builders import container, namespace, node, pod

ZONES = [f"zone-{index}" for index in range(10)]


def make_node(index: int) -> dict[str, Any]:
    name = f"node-{index:05d}"
    return node(
        name,
        "16",
        "64Gi",
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
    items += [make_pod(index, f"node-{index % nodes:05d}", rng) for index in range(bound)]
    items += [make_pod(bound + index, None, rng) for index in range(pending)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def write_cluster(path: Path, nodes: int, pods: int, pending: int) -> list[dict[str, Any]]:
    """Write a synthetic cluster to *path* (a JSON List); the metadata of its pending pods."""
    cluster = make_cluster(nodes, pods, pending)
    path.write_bytes(orjson.dumps(cluster))
    return [
        item["metadata"]
        for item in cluster["items"]
        if item["kind"] == "Pod" and not item["spec"].get("nodeName")
    ]
