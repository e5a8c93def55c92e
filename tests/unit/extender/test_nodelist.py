"""limitguard.extender.nodelist: a NodeList's items cut out of the body's own bytes, window by window."""

from __future__ import annotations

import orjson
import pytest

from limitguard.extender import nodelist
from limitguard.extender.nodelist import split_node_list


def node_list_items(document):
    return document["Nodes"]["items"]


NODES = [
    {"metadata": {"name": f"node-{index}", "labels": {"note": 'a "quoted" \\ value ]}' * index}}}
    for index in range(6)
]
BODY = orjson.dumps({"Pod": {"metadata": {"name": "p\\\\"}}, "Nodes": {"metadata": {}, "items": NODES}})


@pytest.mark.parametrize("window", [1, 2, 7, 64, 1 << 20])
def test_items_are_the_nodes_orjson_reads_whatever_the_window(window: int, monkeypatch) -> None:
    """Escaped quotes, backslash runs and brackets inside strings fall on every window edge at 1-7."""
    monkeypatch.setattr(nodelist, "WINDOW_BYTES", window)
    for body in (BODY, bytearray(BODY)):  # a streamed body arrives as a bytearray
        split = split_node_list(body, node_list_items)
        assert split is not None
        assert [orjson.loads(item) for item in split.items] == NODES
        assert split.document["Pod"] == {"metadata": {"name": "p\\\\"}}


def test_a_document_whose_widest_array_is_not_the_items_is_declined() -> None:
    decoy = orjson.dumps({"Pod": {"x": list(range(500))}, "Nodes": {"items": [{"metadata": {}}]}})
    assert split_node_list(decoy, node_list_items) is None
