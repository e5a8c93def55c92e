"""Any JSON as Koordinator args: findings, never an exception, and the rules only read (the rules run on
args that may already have schema errors, as the webhook gets whatever a ConfigMap holds)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from limitguard.schedcfg import schemas
from tests.unit.schedcfg.hostile import any_json, schema_fields
from tests.unit.schedcfg.koord_helpers import ARGS, BY_KIND, READER

#: Every field name these schemas know, so generated args reach the rules, not only "unknown field".
FIELDS = schema_fields(BY_KIND.values(), {"cpu", "memory", "nvidia.com/gpu", "ignoredResources"})
JSON = any_json(FIELDS, ["", "0", "0s", "-1m", "1h", "-1", "1Gi", "p95", "LeastAllocated", "FullPCPUs", "x"])


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from(sorted(BY_KIND)), args=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6))
def test_rules_never_raise(kind: str, args: dict[str, Any]) -> None:
    entry = BY_KIND[kind]
    findings = schemas.validate(schemas.schema_validator(entry.schema_path), args, ARGS)
    defaulted = copy.deepcopy(args)
    findings += entry.default(defaulted, ARGS, READER)
    before = json.dumps(defaulted, sort_keys=True, default=str)
    findings += entry.validate(defaulted, ARGS, READER)
    assert json.dumps(defaulted, sort_keys=True, default=str) == before
    assert all(f.severity in ("error", "warning", "info") and f.path.startswith("args") for f in findings)
    assert all(str(f) for f in findings)
