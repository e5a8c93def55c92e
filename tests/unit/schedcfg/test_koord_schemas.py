"""The JSON Schemas of the Koordinator args kinds: one per kind, strict like koord-scheduler's decoder
(unknown fields, Go integer widths, duration and quantity syntax), null where Go's decoder takes null.

Facts from koordinator-sh/koordinator v1.8.0 pkg/scheduler/apis/config/v1/types.go (field names, Go
types) and register.go (the kinds, in kube-scheduler's kubescheduler.config.k8s.io/v1 only).
"""

from __future__ import annotations

import json

import pytest

from limitguard.schedcfg import schemas
from tests.support import REPO
from tests.unit.schedcfg.helpers import assert_strict_args_schema
from tests.unit.schedcfg.koord_helpers import BY_KIND, errors, run

FOLDER = REPO / "webhook" / "limitguard" / "schemas" / "args" / "koordinator"


def test_each_kind_has_its_schema_in_the_koordinator_folder() -> None:
    assert {entry.schema_path for entry in BY_KIND.values()} == {
        f"args/koordinator/{kind}.schema.json" for kind in BY_KIND
    }
    assert all((FOLDER / f"{kind}.schema.json").is_file() for kind in BY_KIND)


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_schema_is_strict_described_and_names_its_kind(kind: str) -> None:
    schema = json.loads((FOLDER / f"{kind}.schema.json").read_text())
    assert schema["$id"] == f"https://limitguard.io/schemas/args/koordinator/{kind}.schema.json"
    assert_strict_args_schema(schema, kind)


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_unknown_fields_and_other_kinds_are_refused(kind: str) -> None:
    assert errors(kind, {"noSuchField": 1}) == ['args.noSuchField: Forbidden: unknown field "noSuchField"']
    assert errors(kind, {"kind": "NodeResourcesFitArgs"}) == [
        f'args.kind: Unsupported value: "NodeResourcesFitArgs": supported values: "{kind}"'
    ]
    assert errors(kind, {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}) != []


def test_nested_structs_are_strict_too() -> None:
    assert errors("LoadAwareSchedulingArgs", {"aggregated": {"usageThreshold": {"cpu": 1}}}) == [
        'args.aggregated.usageThreshold: Forbidden: unknown field "usageThreshold" (did you mean "usageThresholds"?)'
    ]
    assert errors("ElasticQuotaArgs", {"hookPlugins": [{"key": "a", "factory": "b"}]})[0] == (
        'args.hookPlugins[0].factory: Forbidden: unknown field "factory" (did you mean "factoryKey"?)'
    )
    assert errors("DeviceShareArgs", {"gpuShareUnsupportedModels": [{"vendor": "huawei", "modle": "x"}]}) == [
        'args.gpuShareUnsupportedModels[0].modle: Forbidden: unknown field "modle" (did you mean "model"?)'
    ]


def test_go_integer_widths() -> None:
    """int32 fields (maxHintNodes, Reservation's candidates and workers) refuse what int64 ones take."""
    assert errors("SchedulingHintArgs", {"maxHintNodes": 2**31}) == [
        "args.maxHintNodes: Invalid value: 2147483648: does not fit in a 32-bit integer"
    ]
    assert errors("ReservationArgs", {"gcDurationSeconds": 2**31}) == []
    assert errors("CoschedulingArgs", {"controllerWorkers": 2**63}) == [
        "args.controllerWorkers: Invalid value: 9223372036854775808: does not fit in a 64-bit integer"
    ]
    assert errors("SchedulingHintArgs", {"maxHintNodes": 1.0}) == [
        "args.maxHintNodes: Invalid value: 1.0: must be of type integer or null, not number"
    ]


def test_durations_are_go_duration_strings() -> None:
    """metav1.Duration decodes a string through time.ParseDuration: a number or "10 minutes" fails."""
    assert errors("CoschedulingArgs", {"defaultTimeout": "1m30s"}) == []
    assert errors("CoschedulingArgs", {"defaultTimeout": 600})[0].startswith(
        "args.defaultTimeout: Invalid value: 600"
    )
    assert errors("ElasticQuotaArgs", {"delayEvictTime": "10 minutes"}) == [
        'args.delayEvictTime: Invalid value: "10 minutes": must be a Go duration such as "30s" or "1m30s"'
    ]


def test_quantities_are_kubernetes_quantities() -> None:
    assert errors("ElasticQuotaArgs", {"defaultQuotaGroupMax": {"cpu": 10, "memory": "20Gi"}}) == []
    assert errors("ElasticQuotaArgs", {"systemQuotaGroupMax": {"cpu": "lots"}}) == [
        'args.systemQuotaGroupMax.cpu: Invalid value: "lots": must be a Kubernetes quantity (e.g. 500m, 2, 1.5Gi, 1e3)'
    ]


def test_null_is_accepted_where_go_accepts_it() -> None:
    """Go's decoder leaves a field at its zero value (a pointer nil) for null: the same as omitting it,
    so defaulting fills it; a null map value is a zero held in the map."""
    findings, out = run("CoschedulingArgs", {"defaultTimeout": None, "controllerWorkers": None})
    assert findings == [] and out["defaultTimeout"] == "10m0s" and out["controllerWorkers"] == 1
    assert errors("LoadAwareSchedulingArgs", {"aggregated": None, "estimator": None}) == []
    assert errors("LoadAwareSchedulingArgs", {"resourceWeights": {"cpu": None}}) == [
        "args.resourceWeights.cpu: Invalid value: 0: resource Weight of cpu should be a positive value, got 0"
    ]
    assert errors(
        "NodeNUMAResourceArgs", {"scoringStrategy": {"type": "MostAllocated", "resources": [None]}}
    ) == [
        "args.scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of  not in valid range (0, 100]"
    ]


def test_schemas_load_through_the_package() -> None:
    for entry in BY_KIND.values():
        validator = schemas.schema_validator(entry.schema_path)
        assert schemas.validate(validator, {"noSuchField": 1}, "args")[0].rule == "schema.unknown-field"
