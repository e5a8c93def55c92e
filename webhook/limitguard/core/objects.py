"""Reading decoded JSON objects: the one type check every parser here makes, made cheap.

`isinstance(value, Mapping)` goes through the ABC machinery (a Python-level `__instancecheck__`),
which costs more than the rest of a binding's field reads. JSON decoding always gives plain dicts,
so they are recognised by their exact type first, and None (a missing field) at once; any other
Mapping still passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EMPTY: Mapping[str, Any] = {}


def is_object(value: Any) -> bool:
    """A JSON object (a dict, or any Mapping a caller built). An absent field (None) is answered
    before the ABC check too: most fields a parser asks for that are not objects are missing ones."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def object_or_empty(value: Any) -> Mapping[str, Any]:
    """*value* when it is a JSON object, else an empty one (missing or mistyped fields read as unset)."""
    return value if is_object(value) else EMPTY
