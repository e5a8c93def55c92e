"""Cluster state from a file: what `kubectl get namespaces,nodes,pods -A -o json|yaml` prints.

JSON Lists are parsed 64 KB of whole items at a time (`limitguard.kube.jsonlist`: orjson,
after a vector scan for where the items end), so loading 150,000 pods never holds the whole parsed
document: memory stays that of the state itself. A List whose items begin past the first megabyte
is streamed item by item (ijson's C backend, ~3x slower). YAML is parsed whole (PyYAML's C
loader); prefer `-o json` for large clusters.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import ijson
import orjson
import yaml

from limitguard.errors import LimitguardError
from limitguard.kube.jsonlist import ListError, NotAList, list_items
from limitguard.state.store import KINDS, ClusterState

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NONE = object()
_FREEZE_EVERY = 1000  # objects applied between gc.freeze() calls (the live feed: a 500-object page)


class ClusterFileError(LimitguardError, ValueError):
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


def _listed(items: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    for item in items:
        if type(item) is dict and "items" not in item and "kind" in item:
            yield item  # the common case, without a generator per object
        else:
            yield from _objects(item)


def _json_objects(stream: BinaryIO) -> Iterator[Mapping[str, Any]]:
    """Items of a JSON List a run at a time; any other JSON document parsed whole."""
    try:
        for run in list_items(stream):
            yield from _listed(run)
        return
    except NotAList:
        stream.seek(0)
    streamed = ijson.items(stream, "items.item", use_float=True)
    first = next(streamed, _NONE)
    if first is not _NONE:
        yield from _listed(itertools.chain([first], streamed))
    else:  # not a List (a single object), or an empty one
        stream.seek(0)
        yield from _objects(orjson.loads(stream.read()))


def read_objects(path: str | Path) -> Iterator[Mapping[str, Any]]:
    """Every Kubernetes object in the file, streamed where the format allows."""
    path = Path(path)
    try:
        with path.open("rb") as stream:
            head = stream.read(4096).lstrip()
            stream.seek(0)
            if head[:1] in (b"{", b"["):
                try:
                    yield from _json_objects(stream)
                except (ijson.JSONError, orjson.JSONDecodeError, ListError) as error:
                    raise ClusterFileError(f"{path}: not valid JSON: {error}") from None
                return
            try:
                documents = list(yaml.load_all(stream, Loader=_YAML_LOADER))
            except yaml.YAMLError as error:
                raise ClusterFileError(f"{path}: not valid YAML: {error}") from None
    except OSError as error:
        raise ClusterFileError(f"{path}: cannot read: {error.strerror}") from None
    for document in documents:
        yield from _objects(document)


def load_cluster_file(state: ClusterState, path: str | Path) -> dict[str, int]:
    """Make the state hold exactly the file's Nodes, Pods and Namespaces; returns counts by kind.

    Records hold no reference cycles, so during a large load the applied ones are moved out of the
    cyclic GC's reach as they come (`gc.freeze()`, as the live feed does per page): otherwise each
    collection walks every record loaded so far (~12% of the load's time at 150,000 pods).
    Reference counting still frees them. `serve` freezes once more when the load is done.
    """
    stale = {kind: state.keys(kind) for kind in KINDS}
    applied = 0
    for obj in read_objects(path):
        kind = str(obj.get("kind", "")).lower() + "s"
        if kind in stale:
            stale[kind].discard(state.upsert(kind, obj))
            applied += 1
            if applied % _FREEZE_EVERY == 0:
                gc.freeze()
    if not applied:
        raise ClusterFileError(f"{path}: holds no Nodes, Pods or Namespaces (expected a List of them)")
    for kind, keys in stale.items():
        state.remove_stale(kind, keys)
        state.mark_synced(kind)
    return state.counts()
