"""A malformed ratio annotation of any size is refused with a message under 200 characters: each
value it quotes is cut to its start, its quote closed and the rest counted ("(N more characters)"),
as docs/security.md promises for a 100,000-character value."""

from __future__ import annotations

import json
import re

import orjson
import pytest

from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.state.records import node_ratio_override
from limitguard.testing.examples import config, worked_example
from tests.support import node, node_write

HUGE = "x" * 100_000
VALID_LONG_NAME = "a" * 253 + "/" + "b" * 63  # the longest valid resource name
PROMISED = 200
# A quoted value cut short: its start, the quote closed, then how much is missing.
CUT = re.compile(r'\.\.\." \((\d+) more characters\)')


@pytest.mark.parametrize(
    "annotation",
    [
        pytest.param(json.dumps({"cpu": HUGE}), id="value"),
        pytest.param(json.dumps({HUGE: 150}), id="resource-name"),
        pytest.param(json.dumps({VALID_LONG_NAME: HUGE}), id="long-name-and-value"),
        pytest.param(json.dumps({"cpu": "9" * 100_000}), id="digit-string"),
        pytest.param(json.dumps({"cpu": "\n" * 100_000}), id="escaped-characters"),
        pytest.param(json.dumps({"cpu": [HUGE]}), id="list-value"),
        pytest.param(json.dumps([HUGE]), id="not-an-object"),
        pytest.param(HUGE, id="not-json"),
        pytest.param('{"cpu": ' + "9" * 5_000 + "}", id="integer-past-4300-digits"),
        pytest.param(json.dumps({"cpu": -int("9" * 4_000)}), id="negative-4000-digits"),
    ],
)
def test_a_huge_malformed_annotation_gets_a_short_message(annotation: str) -> None:
    request = node_write(node("n", annotations={RATIO_ANNOTATION: annotation}))
    response = Validator(worked_example(), config())(decode_review(orjson.dumps(request)))
    assert not response.allowed and response.code == 400
    assert response.message.startswith(f"metadata.annotations[{RATIO_ANNOTATION}]: Invalid value: ")
    assert len(response.message) < PROMISED, response.message
    for cut in CUT.finditer(response.message):
        assert int(cut.group(1)) > 0
        opening = response.message.rfind('"', 0, cut.start())
        assert opening >= 0  # the cut value opens a quote that `..."` closes


def test_a_cut_value_says_how_much_was_cut() -> None:
    request = node_write(node("n", annotations={RATIO_ANNOTATION: json.dumps({"cpu": HUGE})}))
    message = Validator(worked_example(), config())(decode_review(orjson.dumps(request))).message
    [cut] = CUT.finditer(message)
    shown = message[message.rfind('"', 0, cut.start()) + 1 : cut.start()]
    assert set(shown) == {"x"} and len(shown) + int(cut.group(1)) == len(HUGE)


def test_the_state_keeps_the_same_short_reason_and_never_raises() -> None:
    """The node record's problem (logged, shown by explain and in warnings) is the same text."""
    ratios, problem = node_ratio_override({RATIO_ANNOTATION: json.dumps({"cpu": "9" * 100_000})})
    assert ratios is None and problem is not None and len(problem) < 120
