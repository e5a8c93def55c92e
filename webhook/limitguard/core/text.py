"""Bounded echoes of input in messages and logs.

Anyone on the pod network can send a review, and an answer or a log line that repeats a field verbatim
lets them choose its length. Every echo of input goes through ``clip``, which keeps the start (what
a person needs to recognise the value) and says how much was cut.
"""

from __future__ import annotations

import json

#: A value echoed inside a sentence (a quantity, a resource name): enough to recognise it.
VALUE_LENGTH = 64


def clip(text: str, limit: int = VALUE_LENGTH) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and the number cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - len("... ( more characters)") - len(str(len(text))), 1)
    return f"{text[:keep]}... ({len(text) - keep} more characters)"


def quoted(text: str, limit: int = VALUE_LENGTH) -> str:
    """``text`` as a JSON string of at most ``limit`` characters. A longer one keeps its start, closes
    its quote and says how much was cut - ``"abcd..." (99990 more characters)`` - so a message that
    quotes it stays readable and its length stays the sender's no matter what they sent."""
    whole = json.dumps(text[: limit + 1], ensure_ascii=False)
    if len(text) <= limit and len(whole) <= limit:
        return whole
    # The escaped start that fits before `..." (N more characters)`, N at most len(text) digits.
    budget = max(limit - len('"..." ( more characters)') - len(str(len(text))), 1)
    start, used = [], 0
    for char in text[:budget]:
        escaped = json.dumps(char, ensure_ascii=False)[1:-1]
        if used + len(escaped) > budget:
            break
        start.append(escaped)
        used += len(escaped)
    kept = len(start)
    return f'"{"".join(start)}..." ({len(text) - kept} more characters)'
