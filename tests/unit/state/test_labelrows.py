"""The node table's label index: a key's rows are indexed on the first query of that key and kept
current after, whatever the order of node changes and queries (compared with a plain scan)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from limitguard.state.labelrows import LabelRows

KEYS = ("zone", "pool", "gpu", "limitguard.io/limit-room-cpu")
VALUES = ("a", "b", "c")
labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=4)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.integers(0, 7), labels),
        st.tuples(st.just("remove"), st.integers(0, 7)),
        st.tuples(st.just("query"), st.sampled_from(KEYS), st.sampled_from((None, *VALUES))),
    ),
    max_size=40,
)


def scanned(rows: dict[int, dict[str, str]], key: str, value: str | None) -> np.ndarray:
    mask = np.zeros(8, bool)
    for row, carried in rows.items():
        if key in carried and (value is None or carried[key] == value):
            mask[row] = True
    return mask


@settings(max_examples=300, deadline=None)
@given(steps)
def test_the_index_answers_as_a_scan_of_every_row(steps):
    index, rows = LabelRows(), {}
    index.grow(8)
    for step in steps:
        if step[0] == "upsert":
            _, row, carried = step
            if row in rows:
                index.unindex(row)
            index.index(row, carried)
            rows[row] = carried
        elif step[0] == "remove":
            if step[1] in rows:
                index.unindex(step[1])
                del rows[step[1]]
        else:
            _, key, value = step
            assert (index.label_mask(key, value) == scanned(rows, key, value)).all(), (key, value)
            chosen = index.values_mask(key, lambda found: found != "b")
            expected = scanned(rows, key, None) & ~scanned(rows, key, "b")
            assert (chosen == expected).all()
        for key in KEYS:
            assert index.has_key(key) == any(key in carried for carried in rows.values())


def test_only_the_keys_a_query_read_are_indexed_and_counting_keys_moves_the_version():
    index = LabelRows()
    index.grow(4)
    version = index.keys_version
    index.index(0, {"zone": "a", "image-1": "x", "image-2": "y"})
    assert index.keys_version == version + 3  # three keys appeared
    index.label_mask("zone", "a")
    index.label_mask("never-on-any-node", None)
    assert set(index._indexed) == {"zone"}  # the images were never asked for; an unknown key costs nothing
    index.index(1, {"zone": "a"})
    assert index.label_mask("zone", "a").tolist() == [True, True, False, False]
    version = index.keys_version
    index.unindex(0)
    assert index.keys_version == version + 2 and not index.has_key("image-1")  # two keys left
