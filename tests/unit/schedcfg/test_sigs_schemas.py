"""The JSON Schemas of the scheduler-plugins args kinds: one per registered kind, strict, described for
editors, and naming the kind and API version the scheduler decodes."""

from __future__ import annotations

import json

import pytest

from limitguard.schedcfg import schemas
from tests.support import REPO
from tests.unit.schedcfg.helpers import assert_strict_args_schema
from tests.unit.schedcfg.sigs_helpers import BY_KIND, UNRELEASED, errors

FOLDER = REPO / "webhook" / "limitguard" / "schemas" / "args" / "scheduler-plugins"


#: Every schema path the released and the unreleased kinds use.
PATHS = sorted({e.schema_path for e in BY_KIND.values()} | {e.schema_path for e in UNRELEASED.values()})


def test_one_schema_per_registered_kind() -> None:
    assert {p.name for p in FOLDER.glob("*.json")} == {f"{kind}.schema.json" for kind in BY_KIND}
    assert {entry.schema_path for entry in BY_KIND.values()} == {
        f"args/scheduler-plugins/{kind}.schema.json" for kind in BY_KIND
    }
    unreleased = {
        p.relative_to(FOLDER.parent.parent).as_posix() for p in (FOLDER / "master-branch").glob("*.json")
    }
    assert unreleased == {e.schema_path for e in UNRELEASED.values()} - {
        e.schema_path for e in BY_KIND.values()
    }


@pytest.mark.parametrize("path", PATHS)
def test_schema_is_strict_described_and_names_its_kind(path: str) -> None:
    schema = json.loads((FOLDER.parent.parent / path).read_text())
    kind = path.rsplit("/", 1)[1].removesuffix(".schema.json")
    assert schema["$id"] == f"https://limitguard.io/schemas/{path}"
    assert_strict_args_schema(schema, kind, ref_describes=True)


@pytest.mark.parametrize("path", PATHS)
def test_schema_loads_through_the_package(path: str) -> None:
    validator = schemas.schema_validator(path)
    assert schemas.validate(validator, {"noSuchField": 1}, "args")[0].rule == "schema.unknown-field"


def test_null_is_accepted_where_go_accepts_it() -> None:
    """encoding/json (and sigs.k8s.io/json, which kube-scheduler's codec uses) leaves a value at its zero
    for null: a null field is unset, a null list item or map value is a zero value."""
    assert errors("CoschedulingArgs", {"podGroupBackoffSeconds": None}) == []
    assert errors("TargetLoadPackingArgs", {"defaultRequests": {"cpu": None}, "metricProvider": None}) == []
    assert errors("TopologicalSortArgs", {"namespaces": [None]}) == []
    assert errors("NodeResourcesAllocatableArgs", {"resources": [None]}) == [
        "args.resources[0].weight: Invalid value: 0: resource weight of  should be a positive value"
    ]
    assert errors("NodeResourcesAllocatableArgs", {"resources": [{"name": "cpu", "weight": None}]}) == [
        "args.resources[0].weight: Invalid value: 0: resource weight of cpu should be a positive value"
    ]
