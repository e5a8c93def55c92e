"""list_items: a JSON List's items cut into runs by a vector scan, parsed by orjson.

The reference is orjson parsing the whole document: for any valid document the runs hold exactly
its `items`; for any document orjson refuses, list_items refuses too (ListError), or hands it to
the caller's other reader (NotAList) before yielding an item. Window sizes down to one byte put
every cut, quote and run of backslashes across window boundaries.
"""

from __future__ import annotations

import io
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from limitguard.kube.filefeed import ClusterFileError, read_objects
from limitguard.kube.jsonlist import HEAD_BYTES, ListError, NotAList, list_items
from tests.support import FIXTURES

# Text that makes the scan's life hard: delimiters, escapes, brackets, multi-byte characters.
NASTY = st.text(st.sampled_from(list('"\\{}[],: ax\u00e9\u2603\U0001f600\n\t/')), max_size=12)
SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | NASTY
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NASTY, inner, max_size=4),
    max_leaves=20,
)


def _items(document: bytes, window: int, head: int = 1 << 20) -> list[Any]:
    return [item for run in list_items(io.BytesIO(document), window, head) for item in run]


def _encode(document: dict[str, Any], style: int) -> bytes:
    if style == 0:
        return orjson.dumps(document)
    if style == 1:
        return json.dumps(document, indent=4).encode()  # kubectl's layout
    return json.dumps(document, separators=(" ,\n", " :\t"), ensure_ascii=False).encode()


@settings(max_examples=300)
@given(
    items=st.lists(VALUES, max_size=8),
    before=st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata", "x"]), VALUES, max_size=3),
    after=st.dictionaries(st.sampled_from(["z", "kind", "metadata"]), VALUES, max_size=2),
    style=st.integers(0, 2),
    window=st.integers(1, 64),
)
def test_the_runs_hold_exactly_the_items_orjson_finds(items, before, after, style, window) -> None:
    document = _encode(
        {**before, "items": items, **{k: v for k, v in after.items() if k not in before}}, style
    )
    assert _items(document, window) == orjson.loads(document)["items"]


@settings(max_examples=400)
@given(
    items=st.lists(VALUES, min_size=1, max_size=6),
    style=st.integers(0, 2),
    window=st.integers(1, 32),
    edit=st.tuples(
        st.integers(0, 10**6), st.sampled_from([b"", b",", b"]", b"}", b"[", b"{", b'"', b"\\", b" "])
    ),
)
def test_a_broken_document_is_refused_never_read_differently(items, style, window, edit) -> None:
    """One byte replaced (or removed): whatever orjson makes of the result, list_items agrees."""
    valid = _encode({"apiVersion": "v1", "items": items, "kind": "List"}, style)
    at, replacement = edit[0] % len(valid), edit[1]
    document = valid[:at] + replacement + valid[at + 1 :]
    try:
        whole = orjson.loads(document)
    except orjson.JSONDecodeError:
        whole = None
    try:
        found = _items(document, window)
    except ListError:
        assert whole is None, "refused a document orjson reads"
        return
    except NotAList:
        return  # the caller reads it another way (ijson, or orjson whole): nothing handed out
    assert whole is not None, "read a document orjson refuses"
    assert found == whole["items"]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        # orjson's words when the fault is inside a run, the cut's own where it falls on one
        (b'{"items":[{"a":1} {"b":2}]}', r"expected ',' (or '\]' )?(between the items )?at byte 18"),
        (b'{"items":[{"a":1},]}', r"(trailing comma is not allowed|a ',' after the last item) at byte 17"),
        (b'{"items":[{"a":1}}', "closed by '}' at byte 17"),
        (b'{"items":[{"a":1}]', "unexpected end of data at byte 18"),
        (b'{"items":[{"a":1}]} trailing', "unexpected content after document at byte 20"),
        (b'{"kind" "List", "items":[{"a":1}]}', "expected ':' after key at byte 8"),
        (b'{"items":[{"a":1}],"items":[{"b":1}]}', 'more than one top-level "items"'),
        (b'{"items":[{"a":"\\"}]}', "ends inside the items"),
    ],
)
def test_invalid_lists_are_refused_with_where(document: bytes, message: str) -> None:
    for window in (1, 7, 1 << 16):
        with pytest.raises(ListError, match=message):
            _items(document, window)


@pytest.mark.parametrize(
    "document",
    [
        b"[1, 2]",
        b'{"kind": "Pod"}',
        b'{"metadata": {"items": [1]}, "x": []}',
        b'{"a": [1], "items": 2}',
        b"  ",
    ],
)
def test_documents_without_a_top_level_items_array_are_not_lists(document: bytes) -> None:
    with pytest.raises(NotAList):
        _items(document, 4)


def test_an_items_array_past_the_head_is_left_to_the_caller() -> None:
    document = orjson.dumps({"metadata": {"note": "x" * 200}, "items": [{"kind": "Pod"}]})
    assert _items(document, 16, head=1 << 10) == [{"kind": "Pod"}]
    with pytest.raises(NotAList):
        _items(document, 16, head=64)


def test_an_escaped_quote_before_items_is_not_the_key() -> None:
    """`"x\\"items": [...]` is the key `x"items`, not `items`."""
    document = b'{"x\\"items": [1], "items": [{"kind": "Pod"}]}'
    assert _items(document, 3) == [{"kind": "Pod"}]
    with pytest.raises(NotAList):
        _items(b'{"x\\"items": [1]}', 3)


@pytest.mark.parametrize(
    "name",
    [
        "nodelist-json-aks-3nodes-2021.edgexr.json",
        "nodelist-json-gpu-vgpu-a16-nvidia-gpu-capacity.edgexr.json",
    ],
)
@pytest.mark.parametrize("window", [1, 5, 64, 1 << 16])
def test_real_kubectl_lists_read_as_orjson_reads_them(name: str, window: int) -> None:
    """kubectl's layout, with escaped quotes in annotations (the AKS list has 90 of them)."""
    document = (FIXTURES / name).read_bytes()
    assert _items(document, window) == orjson.loads(document)["items"]


def test_the_file_feed_reads_a_list_the_scan_declines_through_ijson(tmp_path) -> None:
    """Items opening past the head: the same objects, streamed item by item instead."""
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "n"}, "spec": {"nodeName": "a"}}
    late = {
        "metadata": {"note": "x" * (HEAD_BYTES + 10)},
        "kind": "List",
        "items": [pod, {"kind": "List", "items": [pod]}],
    }
    path = tmp_path / "late.json"
    path.write_bytes(orjson.dumps(late))
    assert list(read_objects(path)) == [pod, pod]
    path.write_bytes(b'{"kind":"List","items":[' + orjson.dumps(pod) + b" " + orjson.dumps(pod) + b"]}")
    with pytest.raises(ClusterFileError, match=r"late\.json: not valid JSON: .* at byte"):
        list(read_objects(path))
