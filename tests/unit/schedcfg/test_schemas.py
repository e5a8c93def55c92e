"""The shipped JSON Schemas are valid draft 2020-12 schemas with ids, titles and descriptions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from limitguard.schedcfg import schemas
from limitguard.schedcfg.args import ARGS_KINDS
from limitguard.schedcfg.tables.api import CONFIG_VERSIONS
from tests.support import REPO
from tests.unit.schedcfg.helpers import object_schemas

SCHEMA_DIR = REPO / "webhook" / "limitguard" / "schemas"
MINE = sorted(
    [*SCHEMA_DIR.glob("kubescheduler-config-*.schema.json"), *SCHEMA_DIR.glob("args/*.schema.json")]
)


def test_expected_schema_files_exist() -> None:
    names = {p.relative_to(SCHEMA_DIR).as_posix() for p in MINE}
    expected = {f"kubescheduler-config-{v}.schema.json" for v in CONFIG_VERSIONS}
    expected |= {f"args/{k}.schema.json" for k in ARGS_KINDS}
    assert names == expected


@pytest.mark.parametrize("path", sorted(SCHEMA_DIR.rglob("*.json")), ids=lambda p: p.name)
def test_schema_is_valid_against_the_meta_schema(path: Path) -> None:
    schema = json.loads(path.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", MINE, ids=lambda p: p.name)
def test_schema_has_id_title_descriptions_and_is_strict(path: Path) -> None:
    schema = json.loads(path.read_text())
    relative = path.relative_to(SCHEMA_DIR).as_posix()
    assert schema["$id"] == f"https://limitguard.io/schemas/{relative}"
    assert schema["title"] and schema["description"]
    for obj in object_schemas(schema, nullable=False):
        assert obj.get("additionalProperties") is False, obj.get("title")
        for name, prop in obj["properties"].items():
            assert "description" in prop or "$ref" in prop, f"{obj.get('title')}.{name} lacks a description"


def test_schemas_load_as_package_data() -> None:
    assert schemas.load_schema("kubescheduler-config-v1.schema.json")["$id"].endswith("config-v1.schema.json")
    assert (schemas.schema_root() / "args" / "LimitAwareArgs.schema.json").is_file()


def test_v1_has_no_healthz_but_v1beta2_has() -> None:
    v1 = schemas.load_schema("kubescheduler-config-v1.schema.json")["properties"]
    v1beta2 = schemas.load_schema("kubescheduler-config-v1beta2.schema.json")["properties"]
    assert "healthzBindAddress" not in v1 and "healthzBindAddress" in v1beta2
