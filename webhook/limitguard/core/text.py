"""Bounded echoes of input in messages and logs.

Anyone on the pod network can send a review, and an answer or a log line that repeats a field verbatim
lets them choose its length. Every echo of input goes through ``clip``, which keeps the start (what
a person needs to recognise the value) and says how much was cut.
"""

from __future__ import annotations

#: A value echoed inside a sentence (a quantity, a resource name): enough to recognise it.
VALUE_LENGTH = 64


def clip(text: str, limit: int = VALUE_LENGTH) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and the number cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - len("... ( more characters)") - len(str(len(text))), 1)
    return f"{text[:keep]}... ({len(text) - keep} more characters)"
