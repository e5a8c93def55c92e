"""An ExtenderArgs' NodeList read one Node at a time, out of the request's own bytes.

Without nodeCacheCapable, kube-scheduler sends every candidate as a full Node (status.images, labels,
managedFields: 6-20 KB each) and reads the filter's answer back as full Nodes. Parsed whole, a
60 MB body becomes over 600 MB of Python objects, on every replica at once. Here the body is
scanned for its structure a window at a time (the brackets outside strings and their depth, the
scanner of limitguard.kube.jsonlist), each Node is parsed alone and reduced to what policy reads,
and the answer echoes the Nodes' original bytes (memoryviews of the body: no copy until the answer).

The rest of the document (the Pod, the NodeList's metadata) is parsed with the items cut out and an
unguessable token in their place, so a document whose largest array at that depth is not
`Nodes.items` is recognised and not misread.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.kube.jsonlist import WHITESPACE, Scanner

WINDOW_BYTES = 1 << 20  # scanned at a time: the scan's temporaries stay a few MB whatever the body
BACKSLASH = ord("\\")
# Stands for the items while the rest is parsed. Drawn once: it never leaves the process, so it is
# as unguessable as one drawn per body, without a getrandom system call per body.
TOKEN = secrets.token_hex(16)


@dataclass(frozen=True)
class SplitNodeList:
    document: dict[str, Any]  # the ExtenderArgs, its NodeList's items replaced by the token
    token: str
    items: list[memoryview]  # each item's bytes, in order


def _structure(body: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, depth after, and opening-or-not of every bracket outside strings at depths 2-4."""
    view = memoryview(body)
    scanner = Scanner()
    kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    start, size = 0, len(view)
    while start < size:
        end = min(start + WINDOW_BYTES, size)
        while end < size and view[end - 1] == BACKSLASH:  # never cut a run of backslashes
            end += 1
        # the body's own bytes, no copy; bytes.find looks for a backslash as fast as `in` does
        brackets, depths, opens = scanner.feed(view[start:end], body.find(b"\\", start, end) >= 0)
        near = (depths >= 2) & (depths <= 4)
        kept.append((brackets[near] + start, depths[near], opens[near]))
        start = end
    return tuple(np.concatenate(column) for column in zip(*kept, strict=True))  # type: ignore[return-value]


def split_node_list(body: bytes, node_list_of: Callable[[Mapping[str, Any]], Any]) -> SplitNodeList | None:
    """The document and its NodeList's items, or None when the largest array at the items' depth
    is not the one *node_list_of* (the document -> its `items`) resolves: the caller parses whole."""
    view = memoryview(body)
    brackets, depths, opens = _structure(body)
    codes = np.frombuffer(body, np.uint8)[brackets] if len(brackets) else np.empty(0, np.uint8)
    arrays = np.flatnonzero(opens & (depths == 3) & (codes == ord("[")))
    closing = np.flatnonzero(~opens & (depths == 2))
    if not len(arrays) or not len(closing):
        return None
    ends = np.searchsorted(closing, arrays)
    valid = ends < len(closing)
    if not valid.any():
        return None
    arrays, ends = arrays[valid], closing[ends[valid]]
    widest = int(np.argmax(brackets[ends] - brackets[arrays]))
    first, last = int(arrays[widest]), int(ends[widest])
    opened, closed = int(brackets[first]), int(brackets[last])
    if body[closed] != ord("]"):
        return None
    token = TOKEN
    try:
        document = orjson.loads(b"".join((view[:opened], b'"%s"' % token.encode(), view[closed + 1 :])))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict) or node_list_of(document) != token:
        return None
    inside = slice(first + 1, last)
    starts = brackets[inside][opens[inside] & (depths[inside] == 4)]
    stops = brackets[inside][~opens[inside] & (depths[inside] == 3)]
    if len(starts) != len(stops):
        return None
    bounds = [opened + 1, *np.column_stack((starts, stops + 1)).ravel().tolist(), closed]
    for index in range(0, len(bounds), 2):  # between items: one comma; around them: nothing
        gap = bytes(view[bounds[index] : bounds[index + 1]]).strip(WHITESPACE)
        edge = index == 0 or index == len(bounds) - 2
        if gap != (b"" if edge else b","):
            return None
    items = [view[bounds[index] : bounds[index + 1]] for index in range(1, len(bounds) - 1, 2)]
    return SplitNodeList(document, token, items)


def policy_view(node: Mapping[str, Any]) -> dict[str, Any]:
    """What state.records.node_record reads of a Node (name, labels, the ratio annotation, taints,
    unschedulable, allocatable): the rest of a scheduler-sent Node is dropped as soon as it is read."""
    metadata = node.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    annotations = metadata.get("annotations")
    spec = node.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    status = node.get("status")
    status = status if isinstance(status, Mapping) else {}
    kept_annotations = {}
    if isinstance(annotations, Mapping) and RATIO_ANNOTATION in annotations:
        kept_annotations[RATIO_ANNOTATION] = annotations[RATIO_ANNOTATION]
    return {
        "metadata": {
            "name": metadata.get("name"),
            "labels": metadata.get("labels"),
            "annotations": kept_annotations,
        },
        "spec": {"taints": spec.get("taints"), "unschedulable": spec.get("unschedulable")},
        "status": {"allocatable": status.get("allocatable")},
    }
