"""The column encoder of HostPriorityList answers byte for byte what the dict encoder answers."""

import numpy as np
import orjson
from hypothesis import given
from hypothesis import strategies as st

from limitguard.extender.protocol import PriorityTemplate, encode_priorities, encode_priority_columns


@given(st.lists(st.tuples(st.text(), st.integers(-2, 12)), max_size=30))
def test_column_encoding_equals_the_dict_encoding_for_any_names(pairs):
    hosts = [host for host, _ in pairs]
    scores = [score for _, score in pairs]
    assert encode_priority_columns(hosts, scores) == encode_priorities(pairs)


def test_names_with_quotes_commas_and_backslashes_stay_whole():
    hosts = ['a","b', "c\\", '"', ","]
    assert encode_priority_columns(hosts, [1, 2, 3, 4]) == encode_priorities(
        zip(hosts, [1, 2, 3, 4], strict=True)
    )


@given(st.lists(st.tuples(st.text(), st.integers(-2, 12)), min_size=1, max_size=30))
def test_an_array_of_scores_and_pre_encoded_hosts_encode_the_same(pairs):
    hosts = [host for host, _ in pairs]
    scores = np.array([score for _, score in pairs], np.int64)
    host_json = [orjson.dumps(host)[1:-1] for host in hosts]
    assert encode_priority_columns(hosts, scores, host_json) == encode_priorities(pairs)


@given(
    st.lists(st.text(), min_size=1, max_size=80),
    st.data(),
)
def test_a_template_answers_its_hosts_like_the_dict_encoding_for_every_score(hosts, data):
    template = PriorityTemplate([orjson.dumps(host)[1:-1] for host in hosts])
    for _ in range(3):  # one template, several answers: its body is never written to
        # mostly 10s at times: more than the few spliced in by slices
        scores = data.draw(
            st.lists(st.sampled_from([10, 10, 10, *range(11)]), min_size=len(hosts), max_size=len(hosts))
        )
        expected = encode_priorities(zip(hosts, scores, strict=True))
        assert template.encode(np.array(scores, np.int64)) == expected


def test_a_template_refuses_scores_outside_0_to_10_and_other_lengths():
    template = PriorityTemplate([b"a", b"b"])
    assert template.encode(np.array([0, 11])) is None
    assert template.encode(np.array([-1, 0])) is None
    assert template.encode(np.array([1])) is None
    assert template.encode(np.array([10, 0])) == encode_priorities([("a", 10), ("b", 0)])


def test_the_same_read_only_scores_again_get_the_same_bytes_and_any_other_array_its_own():
    template = PriorityTemplate([b"a", b"b"])
    kept = np.array([3, 10])
    kept.flags.writeable = False  # the kept scores' answer when nothing changed
    first = template.encode(kept)
    assert first == encode_priorities([("a", 3), ("b", 10)])
    assert template.encode(kept) is first  # not encoded again
    writeable = np.array([4, 5])
    assert template.encode(writeable) == encode_priorities([("a", 4), ("b", 5)])
    writeable[0] = 6  # an array that can change is never answered from memory
    assert template.encode(writeable) == encode_priorities([("a", 6), ("b", 5)])
    base = np.array([1, 2, 7])
    view = base[:2]
    view.flags.writeable = False  # read-only, but its base can still change under it
    assert template.encode(view) == encode_priorities([("a", 1), ("b", 2)])
    base[0] = 9
    assert template.encode(view) == encode_priorities([("a", 9), ("b", 2)])
    assert template.encode(kept) == first
