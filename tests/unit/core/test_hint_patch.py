"""core.hints.hint_patch on its own: every malformed member is refused (never an AttributeError),
and the operator choice at its edges."""

from __future__ import annotations

import pytest
from limitguard.core.defaults import NotAPod
from limitguard.core.hints import PREFERRED, Operator, choose_operator, hint_patch, preferred_term

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
