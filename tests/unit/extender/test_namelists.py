"""The candidate list read from its bytes (extender.namelists) against the whole body's parse.

A body in kube-scheduler's form, the names last, is read in two parts and its list taken from the
lists kept when its bytes were sent before. Whatever the bodies, one NameLists across all of them
must decode each exactly as parsing it whole does: the same pod, names and key, or the same
error. Bodies are built to mislead a reader of bytes: NodeNames keys inside the pod and inside
strings, keys that end in NodeNames, duplicate keys, items that are not strings.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.extender import namelists
from limitguard.extender.namelists import MOST_KEPT_NAMES, NameLists
from limitguard.extender.protocol import ExtenderProtocolError, decode_extender_args
from limitguard.state.candidates import MOST_KEPT_KEY_BYTES

POD = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}}


def go_body(names: list[str], pod: dict | None = None) -> bytes:
    """ExtenderArgs as kube-scheduler's encoding/json writes it for a nodeCacheCapable extender."""
    return b'{"Pod":%s,"Nodes":null,"NodeNames":%s}' % (orjson.dumps(pod or POD), orjson.dumps(names))


def decoded(body: bytes, lists: NameLists | None = None) -> tuple | str:
    """What decode_extender_args makes of *body*: its fields, or its error."""
    try:
        args = decode_extender_args(body, lists=lists)
    except ExtenderProtocolError as error:
        return str(error)
    return (args.pod, args.node_names, args.nodes, args.names_form, args.node_json, args.names_key)


def test_a_list_sent_again_is_taken_from_the_kept_one_not_parsed_again(monkeypatch):
    lists = NameLists()
    names = [f"node-{index:05d}" for index in range(50)]
    first = decode_extender_args(go_body(names), lists=lists)
    assert first.node_names == names and first.pod == POD
    assert first.names_key == orjson.dumps(names)  # the bytes as sent: the node table's key
    parsed, loads = [], orjson.loads
    monkeypatch.setattr(namelists.orjson, "loads", lambda data: parsed.append(bytes(data)) or loads(data))
    other_pod = {**POD, "metadata": {"name": "q", "namespace": "default"}}
    again = decode_extender_args(go_body(names, other_pod), lists=lists)
    assert again.node_names is first.node_names and again.pod == other_pod
    assert parsed == [go_body([], other_pod).replace(b'"NodeNames":[]}', b'"NodeNames":null}')]
    decode_extender_args(go_body(names[1:]), lists=lists)  # another list: parsed
    assert parsed[-1] == orjson.dumps(names[1:])


def test_only_a_few_lists_of_bounded_size_are_kept():
    lists = NameLists()
    kept = [decode_extender_args(go_body([f"n{index}", "x"]), lists=lists).node_names for index in range(5)]
    # the newest four come back as kept; the oldest was dropped
    assert decode_extender_args(go_body(["n0", "x"]), lists=lists).node_names is not kept[0]
    assert decode_extender_args(go_body(["n4", "x"]), lists=lists).node_names is kept[4]
    many = [f"n{index}" for index in range(MOST_KEPT_NAMES + 1)]
    assert decode_extender_args(go_body(many), lists=lists).node_names is not (
        decode_extender_args(go_body(many), lists=lists).node_names
    )
    long_names = ["x" * 1000] * (MOST_KEPT_KEY_BYTES // 1000)
    long_list = decode_extender_args(go_body(long_names), lists=lists)
    assert long_list.node_names == long_names and long_list.names_key == orjson.dumps(long_names)
    assert isinstance(long_list.names_key, memoryview)  # read in place: the body is not copied
    assert decode_extender_args(go_body(long_names), lists=lists).node_names is not long_list.node_names
    assert decode_extender_args(go_body(["n4", "x"]), lists=lists).node_names is kept[4]  # not displaced


def test_a_list_that_is_not_all_names_is_refused_as_before():
    lists = NameLists()
    body = b'{"Pod":{},"Nodes":null,"NodeNames":["a",1]}'
    with pytest.raises(ExtenderProtocolError, match="must be a list of node names"):
        decode_extender_args(body, lists=lists)
    assert decoded(body, lists) == decoded(body)


NAME = st.sampled_from(["a", "b", "node-1", 'x"y', "]}", '"NodeNames":[', ""])
SCALAR = st.one_of(NAME, st.integers(-2, 2), st.none())
KEY = st.sampled_from(["Pod", "Nodes", "NodeNames", "nodenames", 'x"NodeNames', "NodeNames\\", "a"])
VALUE = st.recursive(
    st.one_of(SCALAR, st.lists(NAME, max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEY, inner, max_size=3)),
    max_leaves=8,
)
NAMES = st.lists(st.one_of(NAME, NAME, st.integers(0, 1)), max_size=4)  # mostly names


@st.composite
def misleading_bodies(draw) -> bytes:
    """An ExtenderArgs-like JSON text: a pod (with misleading keys of its own), other keys, and
    usually a last key that ends in NodeNames with an array; sometimes cut and ended otherwise."""
    pod = draw(st.one_of(st.just(POD), st.dictionaries(KEY, VALUE, max_size=3), VALUE))
    pairs = [("Pod", pod), *draw(st.lists(st.tuples(KEY, VALUE), max_size=2))]
    if draw(st.integers(0, 3)):
        pairs.append(
            (draw(st.sampled_from(["NodeNames", "NodeNames", 'x"NodeNames', "nodenames"])), draw(NAMES))
        )
    text = b"{" + b",".join(orjson.dumps(key) + b":" + orjson.dumps(value) for key, value in pairs) + b"}"
    cut = draw(st.sampled_from([0, 0, 0, 1, 2, 3, len(text) // 2]))
    ending = draw(
        st.sampled_from(
            [b"", b"", b"]}", b',"NodeNames":["a"]}', b'{"NodeNames":["a"]}', b' "NodeNames":[]}']
        )
    )
    return text[: len(text) - cut] + ending


@given(st.lists(misleading_bodies(), min_size=1, max_size=8), st.lists(st.integers(0, 7), max_size=8))
def test_every_body_reads_as_its_whole_parse_with_lists_kept_across_bodies(bodies, repeats):
    lists = NameLists()
    for body in bodies + [bodies[index % len(bodies)] for index in repeats]:
        assert decoded(body, lists) == decoded(body)  # names_key too: these bodies are orjson's


def test_a_body_whose_names_follow_a_decoy_key_in_the_pod_is_read_whole():
    pod = {**POD, "metadata": {"name": "p", "annotations": {"NodeNames": "[1]"}}, "NodeNames": ["ghost"]}
    body = go_body(["a", "b"], pod)
    assert decode_extender_args(body, lists=NameLists()).node_names == ["a", "b"]
    assert decoded(body, NameLists()) == decoded(body)
