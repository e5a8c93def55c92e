"""Any JSON as scheduler-plugins args: findings, never an exception (the rules run on args that may already
have schema errors, as the webhook gets whatever a ConfigMap holds)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import REPO
from tests.unit.schedcfg.sigs_helpers import BY_KIND, UNRELEASED, run


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


#: Every field name any of these schemas knows, so generated args hit the rules, not only "unknown field".
FIELDS = sorted(
    set().union(
        *(_field_names(json.loads((REPO / "schemas" / e.schema_path).read_text())) for e in BY_KIND.values())
    )
    | {"cpu", "memory", "nvidia.com/gpu", "node-1"}
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.sampled_from(["", "1.5", "inf", "Least", "Prometheus", "All", "1000m", "x"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(sorted(UNRELEASED)),
    released=st.booleans(),
    args=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6),
)
def test_rules_never_raise(kind: str, released: bool, args: dict[str, Any]) -> None:
    before = json.dumps(args, sort_keys=True)
    findings, _ = run(kind, args, BY_KIND if released and kind in BY_KIND else UNRELEASED)
    assert all(f.severity in ("error", "warning", "info") and f.path.startswith("args") for f in findings)
    assert json.dumps(args, sort_keys=True) == before  # the caller's args are never changed
