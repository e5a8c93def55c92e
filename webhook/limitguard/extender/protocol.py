"""kube-scheduler's HTTP extender protocol (k8s.io/kube-scheduler/extender/v1), decoded and encoded.

The Go types carry no JSON tags, so kube-scheduler sends the Go field names (`Pod`, `Nodes`,
`NodeNames`) and decodes our answers with encoding/json, which matches keys case-insensitively.
Extenders written against the older tagged types use `pod`, `nodes`, `nodenames`. We accept any
casing on input and answer with the lower-camel names (`nodenames`, `failedNodes`,
`failedAndUnresolvableNodes`, `error`, `host`, `score`), which both forms decode.

ExtenderArgs carries candidates either as full Nodes (`nodes`, a v1.NodeList: nodeCacheCapable
false) or as names only (`nodenames`: nodeCacheCapable true). The filter answer must use the same
form: with nodeCacheCapable, kube-scheduler reads only `nodenames`, and a missing list filters out
every node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from limitguard.errors import LimitguardError
from limitguard.extender.namelists import NameLists
from limitguard.extender.nodelist import SplitNodeList, policy_view, split_node_list
from limitguard.state.candidates import checked_names, names_key

# From this size on, a NodeList body is read one Node at a time (extender.nodelist). Below it, one
# orjson parse is faster and its objects are small. Sizes kube-scheduler sends: docs/extender.md.
SPLIT_FROM_BYTES = 1 << 20


class ExtenderProtocolError(LimitguardError, ValueError):
    """A request body that is not a usable ExtenderArgs."""


class CarriesPod:
    """What every verb reads of the pod a request carries (any JSON: a wrong type reads as empty)."""

    pod: Mapping[str, Any]

    @property
    def pod_metadata(self) -> Mapping[str, Any]:
        metadata = self.pod.get("metadata")
        return metadata if isinstance(metadata, Mapping) else {}

    @property
    def pod_spec(self) -> Mapping[str, Any]:
        spec = self.pod.get("spec")
        return spec if isinstance(spec, Mapping) else {}

    def describe_pod(self) -> str:
        metadata = self.pod_metadata
        return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


@dataclass(frozen=True)
class ExtenderArgs(CarriesPod):
    pod: Mapping[str, Any]
    node_names: list[str]  # candidates, in the scheduler's order
    nodes: dict[str, Mapping[str, Any]] | None  # name -> Node object, when sent as a NodeList
    names_form: bool  # the request carried `nodenames`
    # node_names as a JSON array (as sent, or state.candidates.names_key): the node table's key for them
    names_key: bytes | memoryview | None = None
    # name -> the Node's bytes as sent, when `nodes` holds only their policy views (a large body)
    node_json: dict[str, memoryview] | None = None


def go_field(document: Mapping[str, Any], name: str) -> Any:
    """encoding/json's rule for a struct field: the exact key if present, else any key equal
    ignoring case (tagged or not, kube-scheduler's types decode their fields this way)."""
    if name in document:
        return document[name]
    lowered = name.lower()
    for key, value in document.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def _node_name(node: Any, index: int) -> str:
    metadata = node.get("metadata") if isinstance(node, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ExtenderProtocolError(f"nodes.items[{index}]: a Node with metadata.name is required")
    return name


def _node_list_items(document: Mapping[str, Any]) -> Any:
    node_list = go_field(document, "Nodes")
    return go_field(node_list, "items") if isinstance(node_list, Mapping) else None


def _split_nodes(
    split: SplitNodeList,
) -> tuple[dict[str, Mapping[str, Any]], dict[str, memoryview]]:
    """Each Node parsed alone and reduced to its policy view; its bytes kept for the answer."""
    nodes: dict[str, Mapping[str, Any]] = {}
    node_json: dict[str, memoryview] = {}
    for index, item in enumerate(split.items):
        try:
            node = orjson.loads(item)
        except orjson.JSONDecodeError as error:
            raise ExtenderProtocolError(f"nodes.items[{index}] is not valid JSON: {error}") from None
        name = _node_name(node, index)
        nodes[name] = policy_view(node)
        node_json[name] = item
    return nodes, node_json


def decode_extender_args(
    body: bytes, split_from: int = SPLIT_FROM_BYTES, lists: NameLists | None = None
) -> ExtenderArgs:
    """The ExtenderArgs in *body*; from *split_from* bytes on, a NodeList is read one Node at a time.
    *lists*: the candidate lists read lately, so that a list sent again is not parsed again."""
    sent = lists.split(body, split_from) if lists is not None else None
    split = split_node_list(body, _node_list_items) if sent is None and len(body) >= split_from else None
    node_json: dict[str, memoryview] | None = None
    if sent is not None:
        document: Any = sent.document
    elif split is not None:
        document = split.document
    else:
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise ExtenderProtocolError(f"body is not valid JSON: {error}") from None
    if not isinstance(document, Mapping):
        raise ExtenderProtocolError("body must be a JSON object (ExtenderArgs)")
    pod = go_field(document, "Pod")
    if not isinstance(pod, Mapping):
        raise ExtenderProtocolError("ExtenderArgs.pod must be a Pod object")
    node_list = go_field(document, "Nodes")
    names = sent.names if sent is not None else go_field(document, "NodeNames")
    nodes: dict[str, Mapping[str, Any]] | None = None
    if split is not None:
        nodes, node_json = _split_nodes(split)
    elif node_list is not None:
        items = go_field(node_list, "items") if isinstance(node_list, Mapping) else None
        if items is None:
            items = []
        if not isinstance(items, list):
            raise ExtenderProtocolError("ExtenderArgs.nodes must be a NodeList with an items list")
        nodes = {_node_name(node, index): node for index, node in enumerate(items)}
    if nodes is None and names is None:
        raise ExtenderProtocolError("ExtenderArgs carries neither nodes nor nodenames")
    node_names = names if names is not None else list(nodes or {})
    if sent is not None:
        key = sent.names_json
    elif isinstance(node_names, list) and checked_names(node_names):
        key = names_key(node_names)
    else:
        raise ExtenderProtocolError("ExtenderArgs.nodenames must be a list of node names")
    return ExtenderArgs(
        pod=pod,
        node_names=node_names,
        nodes=nodes,
        names_form=names is not None,
        names_key=key,
        node_json=node_json,
    )


def encode_filter_result(
    args: ExtenderArgs, passed: Iterable[str], failed: Mapping[str, str], error: str = ""
) -> bytes:
    """An ExtenderFilterResult in the form the request used (Nodes echoed as they were sent)."""
    passed = list(passed)
    result: dict[str, Any] = {}
    if args.names_form or args.nodes is None:
        result["nodenames"] = passed
    raw = args.node_json
    if args.nodes is not None and raw is None:
        result["nodes"] = {
            "apiVersion": "v1",
            "kind": "NodeList",
            "metadata": {},
            "items": [args.nodes[name] for name in passed if name in args.nodes],
        }
    result["failedNodes"] = dict(failed)
    result["failedAndUnresolvableNodes"] = {}
    result["error"] = error
    if raw is None:
        return orjson.dumps(result)
    items = b",".join([raw[name] for name in passed if name in raw])
    return b"".join((_NODE_LIST_HEAD, items, b"]},", orjson.dumps(result)[1:]))


_NODE_LIST_HEAD = b'{"nodes":{"apiVersion":"v1","kind":"NodeList","metadata":{},"items":['


def encode_filter_error(message: str) -> bytes:
    """An ExtenderFilterResult that only reports an error (kube-scheduler fails the filter call)."""
    return orjson.dumps({"failedNodes": {}, "failedAndUnresolvableNodes": {}, "error": message})


def encode_priorities(priorities: Iterable[tuple[str, int]]) -> bytes:
    """A HostPriorityList: [{"host": name, "score": 0..10}]."""
    return orjson.dumps([{"host": host, "score": score} for host, score in priorities])


# After a host's name: its score (0..10, MaxExtenderPriority) and the start of the next entry.
_SEPARATORS = tuple(b'","score":%d},{"host":"' % score for score in range(11))


_SEPARATOR_ARRAY = np.empty(len(_SEPARATORS), object)  # the same, gathered by an array of scores
_SEPARATOR_ARRAY[:] = _SEPARATORS


def encode_priority_columns(
    hosts: Sequence[str], scores: Sequence[int] | np.ndarray, host_json: list[bytes] | None = None
) -> bytes:
    """encode_priorities(zip(hosts, scores)), byte for byte, without a dict per host.

    orjson encodes the names once; inside a JSON string every quote is escaped, so `","` only
    ever separates two of them. The answer is the names interleaved with one precomputed
    separator per score (0..10), joined in C: 5,000 hosts cost a fraction of 5,000 dicts. Any
    other score falls back to the dict encoding. *host_json*, when the caller has them, are the
    hosts already encoded (orjson.dumps(host) without its quotes); *scores* may be an int array.
    """
    if not hosts:
        return b"[]"
    if isinstance(scores, np.ndarray):
        if int(scores.min()) < 0 or int(scores.max()) >= len(_SEPARATORS):
            return encode_priorities(zip(hosts, scores.tolist(), strict=True))
        separators = _SEPARATOR_ARRAY[scores].tolist()
    elif min(scores) < 0 or max(scores) >= len(_SEPARATORS):
        return encode_priorities(zip(hosts, scores, strict=True))
    else:
        separators = list(map(_SEPARATORS.__getitem__, scores))
    names = host_json if host_json is not None else orjson.dumps(list(hosts))[2:-2].split(b'","')
    pieces: list[bytes] = [b""] * (2 * len(names) + 1)
    pieces[0] = b'[{"host":"'
    pieces[1::2] = names
    pieces[2::2] = separators
    pieces[-1] = pieces[-1][: -len(b',{"host":"')] + b"]"
    return b"".join(pieces)


_HEAD = b'[{"host":"'
_ZERO_SEPARATOR = _SEPARATORS[0]
_SCORE_KEY = b'","score":'
_FEW_TENS = 32  # up to this many scores of 10 are spliced in by slices; more by one numpy insert
_LAST_DIGIT = np.frombuffer(b"01234567890", np.uint8)  # a score 0..10: the digit its JSON ends with


class PriorityTemplate:
    """The HostPriorityList of a fixed list of hosts with every score 0, and where each score's digit
    sits: the same hosts answered again cost a copy with the digits written in (numpy), not a join of
    10,000 pieces. A list comes again when a prioritize follows a filter that passed every node, or
    where kube-scheduler sends every node in the same order call after call. The last answer is kept
    with its scores: the same read-only score array again (the kept scores' answer when nothing
    changed) is answered with the same bytes."""

    __slots__ = ("_body", "_digits", "_last")

    def __init__(self, host_json: list[bytes]) -> None:
        """*host_json*: the hosts as encode_priority_columns takes them (non-empty)."""
        self._body = _HEAD + _ZERO_SEPARATOR.join(host_json) + _ZERO_SEPARATOR[: -len(b',{"host":"')] + b"]"
        lengths = np.fromiter(map(len, host_json), np.int64, len(host_json))
        self._digits = (
            len(_HEAD)
            + np.cumsum(lengths)
            + np.arange(len(host_json), dtype=np.int64) * len(_ZERO_SEPARATOR)
            + len(_SCORE_KEY)
        )
        self._last: tuple[np.ndarray, bytes] | None = None

    def encode(self, scores: np.ndarray) -> bytes | None:
        """encode_priority_columns(the hosts, *scores*) byte for byte; None for a score not in 0..10."""
        last = self._last
        if last is not None and last[0] is scores:
            return last[1]
        answer = self._encode(scores)
        if answer is not None and not scores.flags.writeable and scores.base is None:
            self._last = (scores, answer)  # read-only and its own memory: its scores cannot change
        return answer

    def _encode(self, scores: np.ndarray) -> bytes | None:
        if len(scores) != len(self._digits):
            return None
        lowest, highest = int(scores.min()), int(scores.max())
        if lowest < 0 or highest > 10:
            return None
        answer = bytearray(self._body)
        answer_bytes = np.frombuffer(answer, np.uint8)  # a view: written into, not copied
        answer_bytes[self._digits] = _LAST_DIGIT[scores]
        if highest < 10:
            return bytes(answer)
        cuts = self._digits[scores == 10]  # each 10 is a "1" before its "0"
        if len(cuts) > _FEW_TENS:
            return np.insert(answer_bytes, cuts, ord("1")).tobytes()
        pieces: list[bytes | memoryview] = []
        view = memoryview(answer)
        start = 0
        for cut in cuts.tolist():
            pieces += (view[start:cut], b"1")
            start = cut
        pieces.append(view[start:])
        return b"".join(pieces)
