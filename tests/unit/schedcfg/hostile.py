"""Hypothesis strategies shared by the hostile-args tests: any JSON built from the field names the
schemas of some args kinds know, so generated args reach the rules, not only "unknown field"."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st

from limitguard.schedcfg.args.kind import ArgsKind
from tests.support import REPO


def _field_names(node: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(node, dict):
        names |= set(node.get("properties", {}))
        for value in node.values():
            names |= _field_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= _field_names(value)
    return names


def schema_fields(entries: Iterable[ArgsKind], extra: set[str]) -> list[str]:
    """Every field name the entries' schemas know, plus ``extra`` (map keys such as resource names)."""
    return sorted(
        set().union(
            *(
                _field_names(
                    json.loads((REPO / "webhook" / "limitguard" / "schemas" / e.schema_path).read_text())
                )
                for e in entries
            )
        )
        | extra
    )


def any_json(fields: list[str], samples: list[str]) -> st.SearchStrategy[Any]:
    """Scalars (with ``samples`` among the strings), lists and objects keyed by ``fields``."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        st.text(max_size=6),
        st.sampled_from(samples),
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(fields), inner, max_size=4)
        ),
        max_leaves=12,
    )
