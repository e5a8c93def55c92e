"""Extender bodies read without holding the whole NodeList as Python objects (limitguard.extender.nodelist).

kube-scheduler without nodeCacheCapable sends every candidate as a full Node and reads the filter's
answer back as full Nodes (k8s.io/kube-scheduler extender/v1 ExtenderArgs / ExtenderFilterResult,
kubernetes/kubernetes pkg/scheduler/extender.go). Real Nodes come from tests/fixtures (an AKS node,
6.2 KB with managedFields; an RKE2 GPU node, 13.9 KB with 22 images). The split reading must give the
same ExtenderArgs and the same answers as one whole parse, for every layout, and hold a fraction
of the memory; memory is measured with tracemalloc (allocation counts, not machine speed).
"""

from __future__ import annotations

import copy
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.extender.nodelist import policy_view
from limitguard.extender.protocol import ExtenderProtocolError, decode_extender_args, encode_filter_result
from tests.integration.extender.shapes import scheduler_pod

FIXTURES = Path(__file__).parent.parent / "fixtures"
REAL_NODES = [
    *orjson.loads((FIXTURES / "nodelist-json-aks-3nodes-2021.edgexr.json").read_bytes())["items"][:1],
    *orjson.loads((FIXTURES / "nodelist-json-gpu-vgpu-a16-nvidia-gpu-capacity.edgexr.json").read_bytes())[
        "items"
    ],
]


def nodes(count: int) -> list[dict[str, Any]]:
    made = []
    for index in range(count):
        node = copy.deepcopy(REAL_NODES[index % len(REAL_NODES)])
        node["metadata"]["name"] = f"node-{index:05d}"
        made.append(node)
    return made


def body_of(node_list: list[Any], **extra: Any) -> bytes:
    """As Go marshals extenderv1.ExtenderArgs: untagged field names, the unused one null."""
    return orjson.dumps(
        {"Pod": scheduler_pod(), "Nodes": {"metadata": {}, "items": node_list}, "NodeNames": None, **extra}
    )


def both(body: bytes) -> tuple[Any, Any]:
    """(whole parse, split reading) of the same body."""
    return decode_extender_args(body, split_from=len(body) + 1), decode_extender_args(body, split_from=0)


def test_split_reading_gives_the_same_args_and_the_same_answers():
    sent = nodes(40)
    sent[3]["metadata"]["annotations"] = {RATIO_ANNOTATION: "cpu=150", "other": "x" * 100}
    whole, split = both(body_of(sent))
    assert split.node_json is not None and whole.node_json is None
    assert split.node_names == whole.node_names == [node["metadata"]["name"] for node in sent]
    assert split.pod == whole.pod and split.names_key == whole.names_key
    assert split.nodes["node-00003"]["metadata"]["annotations"] == {RATIO_ANNOTATION: "cpu=150"}
    for name, node in whole.nodes.items():  # the policy view keeps every field a node record reads
        view = split.nodes[name]
        assert view["status"]["allocatable"] == node["status"]["allocatable"]
        assert view["metadata"]["labels"] == node["metadata"]["labels"]
        assert view["spec"]["taints"] == node["spec"].get("taints")
    passed, failed = split.node_names[::3], {"node-00001": "why"}
    assert orjson.loads(encode_filter_result(split, passed, failed)) == orjson.loads(
        encode_filter_result(whole, passed, failed)
    )
    echoed = orjson.loads(encode_filter_result(split, passed, failed))["nodes"]["items"]
    assert echoed == [node for node in sent if node["metadata"]["name"] in passed]  # unchanged


@pytest.mark.parametrize(
    "strings",
    [
        'a "quoted" ] } [ { value',
        "backslashes \\\\ at the end \\\\",
        '\\\\"',
        "\\u005d unicode \u00e9 \U0001f600",
    ],
)
def test_brackets_and_escapes_inside_strings_do_not_move_the_cuts(strings):
    sent = nodes(5)
    for node in sent:
        node["metadata"]["labels"]["tricky"] = strings
    sent[2]["metadata"]["annotations"] = {"k": strings * 3}
    whole, split = both(body_of(sent))
    assert split.node_json is not None and split.nodes == {
        name: policy_view(node) for name, node in whole.nodes.items()
    }
    assert [orjson.loads(split.node_json[name]) for name in split.node_names] == sent


@pytest.mark.parametrize(
    ("body", "names"),
    [
        # a wider array at the items' depth that is not Nodes.items: read whole, not misread
        (
            orjson.dumps(
                {"Pod": {**scheduler_pod(), "decoy": list(range(5000))}, "Nodes": {"items": nodes(2)}}
            ),
            ["node-00000", "node-00001"],
        ),
        (body_of([]), []),
        (orjson.dumps({"Pod": scheduler_pod(), "NodeNames": ["a", "b"]}), ["a", "b"]),
        (
            orjson.dumps({"pod": scheduler_pod(), "nodes": {"items": nodes(3)}}),
            [f"node-0000{i}" for i in range(3)],
        ),
    ],
)
def test_other_layouts_decode_as_a_whole_parse_does(body, names):
    whole, split = both(body)
    assert split.node_names == whole.node_names == names
    assert orjson.loads(encode_filter_result(split, names[:1], {})) == orjson.loads(
        encode_filter_result(whole, names[:1], {})
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (body_of(nodes(2))[:-40], "not valid JSON"),
        (body_of([*nodes(2), None]), "metadata.name is required"),
        (body_of([*nodes(2), {"metadata": {}}]), "nodes.items[2]: a Node with metadata.name is required"),
        (body_of(nodes(2)).replace(b'"node-00001"', b'"node-00001" "x"'), "not valid JSON"),
    ],
)
def test_bad_bodies_are_refused_whichever_way_they_are_read(body, message):
    for split_from in (0, len(body) + 1):
        with pytest.raises(ExtenderProtocolError) as refused:
            decode_extender_args(body, split_from=split_from)
        assert message in str(refused.value)


def _peak(body: bytes, split_from: int) -> int:
    tracemalloc.start()
    try:
        args = decode_extender_args(body, split_from=split_from)
        encode_filter_result(args, args.node_names, {})
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_nodelist_is_read_in_a_fraction_of_the_memory_of_a_whole_parse():
    body = body_of(nodes(600))  # ~6 MB
    whole, split = _peak(body, len(body) + 1), _peak(body, 0)
    print(f"body {len(body):,} B: whole parse peak {whole:,} B, split {split:,} B")
    assert split < 3 * len(body)  # the answer's copy of the echoed Nodes, the scan's windows
    assert split * 2 < whole
