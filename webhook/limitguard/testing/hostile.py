"""Hostile input shared by the fuzz tests and bench/fuzz.py: mutated AdmissionReviews and files
that would hurt a careless YAML loader (an alias bomb, 50 MB of configuration)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from limitguard.testing.builders import binding, pod, pod_create, resize, review

# Real-world reviews (tests/fixtures) the mutations start from, then the builders' own shapes.
BASE_REVIEW_FIXTURES = (
    "admissionreview-v1-pod-create-gke-no-resources.kube-rs.json",
    "admissionreview-v1beta1-pod-create-extended-resources-cpupool.nokia-cpu-pooler.json",
)
BASE_REQUEST_FIXTURES = (
    "admissionrequest-pods-binding-create-k3s.kyverno-blog.yaml",
    "admissionrequest-pod-create-with-resources-kind.kyverno.json",
    "admissionrequest-configmap-create-openshift-oc.kyverno-validate-manifest.json",
)


def base_reviews(fixture: Callable[[str], Any]) -> list[dict[str, Any]]:
    """The reviews mutations start from; *fixture* loads a file of tests/fixtures by name."""
    return [
        *(fixture(name) for name in BASE_REVIEW_FIXTURES),
        *(review(fixture(name)) for name in BASE_REQUEST_FIXTURES),
        binding("pod5", "node1"),
        pod_create(pod("p", node_name="node2", cpu="1")),
        resize(pod("pod3", node_name="node2", cpu="3"), pod("pod3", node_name="node2", cpu="4")),
    ]


def paths(document: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indices) inside *document*, down to 12 levels."""
    found = [prefix]
    if len(prefix) >= 12:
        return found
    if isinstance(document, dict):
        for key, value in document.items():
            found += paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += paths(value, (*prefix, index))
    return found


def mutate(document: Any, path: tuple, action: str, value: Any) -> Any:
    """Apply one mutation at *path*: replace with *value*, delete, a 100 kB string or 200-deep nesting."""
    if not path:
        return value
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "huge":
        parent[last] = "x" * 100_000
    elif action == "deep":
        nested: Any = "bottom"
        for _ in range(200):
            nested = [nested]
        parent[last] = nested
    else:
        parent[last] = value
    return document


def billion_laughs() -> str:
    """A YAML alias bomb: nine levels of nine aliases each."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 10)]
    return "\n".join(lines) + "\nkind: KubeSchedulerConfiguration\n"


def write_fifty_megabytes(huge: Path) -> None:
    """A 50 MB KubeSchedulerConfiguration (a long profiles list), written in chunks."""
    with huge.open("wb") as stream:
        stream.write(
            b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        )
        chunk = b"- schedulerName: s\n" * 4096
        while stream.tell() < 50 * 1024 * 1024:
            stream.write(chunk)


FIFTY_MEGABYTES_OF_STDIN = b"a: b\n" * (10 * 1024 * 1024)
