"""`quoted`: a value quoted in a message, cut to a bound with its quote closed and the rest counted."""

from __future__ import annotations

import json

import pytest

from limitguard.core.text import quoted


@pytest.mark.parametrize("text", ["", "cpu", "x" * 62, 'say "hi"'])
def test_a_short_value_is_its_json_string(text: str) -> None:
    assert quoted(text) == json.dumps(text, ensure_ascii=False)


@pytest.mark.parametrize("text", ["x" * 100_000, "\n" * 100_000, "é" * 1000, '"' * 5000, "x" * 63], ids=len)
def test_a_long_value_keeps_its_start_closes_its_quote_and_counts_the_rest(text: str) -> None:
    for limit in (44, 64):
        shown = quoted(text, limit)
        assert len(shown) <= limit
        start, _, rest = shown.partition('..." (')
        kept = json.loads(start + '"')  # the start is a valid JSON string once its quote is closed
        assert text.startswith(kept) and kept
        assert rest == f"{len(text) - len(kept)} more characters)"
