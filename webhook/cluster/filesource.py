"""Cluster state from a file: what `kubectl get nodes,pods,namespaces -A -o yaml|json` prints."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import yaml

from webhook.cluster.state import KINDS, ClusterState

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ClusterFileError(ValueError):
    """A cluster file that cannot be read or holds no Kubernetes objects."""


def _objects(document: Any) -> Iterator[Mapping[str, Any]]:
    """Flatten List / NodeList / PodList documents into their objects."""
    if not isinstance(document, Mapping):
        return
    items = document.get("items")
    if isinstance(items, list) and str(document.get("kind", "")).endswith("List"):
        for item in items:
            yield from _objects(item)
    elif "kind" in document:
        yield document


def read_objects(path: str | Path) -> list[Mapping[str, Any]]:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ClusterFileError(f"{path}: cannot read: {error.strerror}") from None
    try:
        documents = [orjson.loads(data)] if data.lstrip()[:1] in (b"{", b"[") else None
    except orjson.JSONDecodeError as error:
        raise ClusterFileError(f"{path}: not valid JSON: {error}") from None
    if documents is None:
        try:
            documents = list(yaml.load_all(data, Loader=_YAML_LOADER))
        except yaml.YAMLError as error:
            raise ClusterFileError(f"{path}: not valid YAML: {error}") from None
    objects = [obj for document in documents for obj in _objects(document)]
    if not objects:
        raise ClusterFileError(f"{path}: holds no Kubernetes objects (expected a List of Nodes and Pods)")
    return objects


def load_cluster_file(state: ClusterState, path: str | Path) -> dict[str, int]:
    """Replace the state with the file's Nodes, Pods and Namespaces; returns counts by kind."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {kind: [] for kind in KINDS}
    for obj in read_objects(path):
        kind = str(obj.get("kind", "")).lower() + "s"
        if kind in by_kind:
            by_kind[kind].append(obj)
    state.replace_nodes(by_kind["nodes"])
    state.replace_namespaces(by_kind["namespaces"])
    state.replace_pods(by_kind["pods"])
    for kind in KINDS:
        state.mark_synced(kind)
    return {kind: len(objects) for kind, objects in by_kind.items()}
