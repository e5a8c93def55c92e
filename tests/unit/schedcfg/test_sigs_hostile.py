"""Any JSON as scheduler-plugins args: findings, never an exception (the rules run on args that may already
have schema errors, as the webhook gets whatever a ConfigMap holds)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.schedcfg.hostile import any_json, schema_fields
from tests.unit.schedcfg.sigs_helpers import BY_KIND, UNRELEASED, run

#: Every field name these schemas know, so generated args reach the rules, not only "unknown field".
FIELDS = schema_fields(BY_KIND.values(), {"cpu", "memory", "nvidia.com/gpu", "node-1"})
JSON = any_json(FIELDS, ["", "1.5", "inf", "Least", "Prometheus", "All", "1000m", "x"])


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
