"""core.hints.hint_patch on its own: every malformed member is refused (never an AttributeError),
and the operator choice at its edges."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest

from limitguard.core.defaults import NotAPod
from limitguard.core.hints import (
    PREFERRED,
    Operator,
    choose_operator,
    digest_of,
    hint_annotation,
    hint_patch,
    preferred_term,
    term_digest,
)

TERM = preferred_term(Operator.IN, ["a"], 100)


@pytest.mark.parametrize(
    "pod",
    [
        {"spec": []},
        {"spec": {}, "metadata": []},
        {"spec": {}, "metadata": {"annotations": []}},
        {"spec": {"affinity": [1]}},
        {"spec": {"affinity": "x"}},
        {"spec": {"affinity": {"nodeAffinity": [1]}}},
        {"spec": {"affinity": {"nodeAffinity": {PREFERRED: {"a": 1}}}}},
        {"spec": {"affinity": {"nodeAffinity": {PREFERRED: 3}}}},
    ],
)
def test_a_malformed_member_is_refused(pod):
    with pytest.raises(NotAPod):
        hint_patch(pod, TERM, "{}")


def test_null_members_are_added_over():
    ops = hint_patch({"spec": {"affinity": {"nodeAffinity": None}}, "metadata": None}, TERM, "{}")
    assert [op["path"] for op in ops] == ["/spec/affinity/nodeAffinity", "/metadata"]


@pytest.mark.parametrize(
    ("fit", "unfit", "unlabelled", "max_nodes", "expected"),
    [
        (3, 2, False, 500, Operator.NOT_IN),
        (2, 2, False, 500, Operator.IN),  # not shorter
        (3, 2, True, 500, Operator.IN),  # NotIn would favour the unlabelled node without room
        (900, 600, False, 500, Operator.IN),  # a capped NotIn would favour unnamed nodes without room
    ],
)
def test_the_operator(fit, unfit, unlabelled, max_nodes, expected):
    assert choose_operator(fit, unfit, unlabelled, max_nodes) is expected


def test_the_digest_is_of_the_bytes_earlier_releases_wrote_and_orjsons_are_the_same():
    """A pod hinted by an earlier release records the digest of json.dumps(sort_keys) of its term; a
    reinvocation must still recognise it. The webhook encodes its own term with orjson: same bytes."""
    term = preferred_term(Operator.NOT_IN, ["node-b", "nødé-a", 'q"uote', "tab\t"], 100)
    text = json.dumps(term, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert term_digest(term) == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert orjson.dumps(term, option=orjson.OPT_SORT_KEYS) == text.encode()
    annotation = hint_annotation(term, fit=3, eligible=5, capped=False)
    assert json.loads(annotation)["term"] == term_digest(term)
    assert hint_annotation(term, 3, 5, False, digest_of(text.encode())) == annotation
