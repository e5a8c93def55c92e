"""docs/helm.md's values table is checked against the chart: every key of values.yaml and of
values.schema.json has a row (a row for a map the schema leaves open covers what is inside it),
every row names a key the chart has, a row for `webhooks.<name>...` lists every webhook, and the
values-file examples of the page pass the chart's schema and limitguard's own loader."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
import yaml

from limitguard.cli.configfile import parse_config
from tests.support import REPO

CHART = REPO / "charts" / "limitguard"
PAGE = REPO / "docs" / "helm.md"
VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
SCHEMA = json.loads((CHART / "values.schema.json").read_text())
WILDCARD = "<name>"


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMA["definitions"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _closed(schema: dict[str, Any]) -> bool:
    """An object whose keys the schema lists and allows no others: each key needs its own row."""
    schema = _resolved(schema)
    return schema.get("additionalProperties") is False and bool(schema.get("properties"))


def schema_at(path: str) -> dict[str, Any]:
    schema = SCHEMA
    for part in path.split("."):
        schema = _resolved(schema).get("properties", {}).get(part, {})
    return _resolved(schema)


def chart_keys() -> set[str]:
    """Every key a user can set: values.yaml's and the schema's, down to where a map is open."""
    keys: set[str] = set()

    def from_values(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict) and value and _closed(schema_at(path)):
                from_values(value, path + ".")
            else:
                keys.add(path)

    def from_schema(schema: dict[str, Any], prefix: str) -> None:
        for key, child in _resolved(schema).get("properties", {}).items():
            path = f"{prefix}{key}"
            if _closed(child):
                from_schema(child, path + ".")
            else:
                keys.add(path)

    from_values(VALUES, "")
    from_schema(SCHEMA, "")
    return keys


def values_section() -> str:
    text = PAGE.read_text()
    start = text.index("\n## Values\n")
    return text[start : text.index("\n## ", start + 1)]


def rows() -> Iterator[tuple[list[str], str]]:
    """(the keys a row names, its meaning): `a.b` / `.c` and `a.b`, `.c` name a.b and a.c."""
    for line in values_section().splitlines():
        if not line.startswith("| `"):
            continue
        first, _default, meaning = (cell.strip() for cell in line.strip("|").split(" | ", 2))
        names: list[str] = []
        for token in re.findall(r"`([^`]+)`", first):
            if token.startswith(".") and names:
                token = names[-1].rsplit(".", 1)[0] + token
            names.append(token)
        yield names, meaning


def matches(name: str, key: str) -> bool:
    pattern = re.escape(name).replace(re.escape(WILDCARD), r"[^.]+")
    return re.fullmatch(pattern, key) is not None


def _shared(path: str) -> bool:
    """Whether the schema gives *path* a shared definition ($ref: resources, cpu and memory): one row
    describes it whole."""
    schema = SCHEMA
    for part in path.split("."):
        schema = _resolved(schema).get("properties", {}).get(part, {})
    return "$ref" in schema


def covered(key: str, rows_by_name: dict[str, str]) -> bool:
    """A row names the key, or names what holds it: a map the schema leaves open, a shared
    definition, or an object whose row names each of its keys."""
    parts = key.split(".")
    for depth in range(len(parts), 0, -1):
        around = ".".join(parts[:depth])
        for name, line in rows_by_name.items():
            if not matches(name, around):
                continue
            if depth == len(parts) or not _closed(schema_at(around)) or _shared(around):
                return True
            if all(re.search(rf"\b{child}\b", line) for child in schema_at(around)["properties"]):
                return True
    return False


def test_every_chart_value_has_a_row() -> None:
    rows_by_name = {name: meaning for row, meaning in rows() for name in row}
    missing = sorted(key for key in chart_keys() if not covered(key, rows_by_name))
    assert missing == [], "values with no row in docs/helm.md's values table"


def test_every_row_names_a_chart_value() -> None:
    keys = chart_keys() | {key.rsplit(".", 1)[0] for key in chart_keys()}  # a row may cover a section
    unknown = [name for row, _ in rows() for name in row if not any(matches(name, key) for key in keys)]
    assert unknown == [], "rows of docs/helm.md's values table for keys the chart does not have"


def test_a_per_webhook_row_lists_every_webhook() -> None:
    webhooks = set(VALUES["webhooks"])
    for names, meaning in rows():
        if any(name.startswith(f"webhooks.{WILDCARD}.enabled") for name in names):
            listed = set(re.findall(r"`([a-z]+)`", meaning))
            assert webhooks <= listed, f"webhooks missing from the row: {sorted(webhooks - listed)}"
            return
    pytest.fail("no `webhooks.<name>.enabled` row")


def examples() -> list[dict[str, Any]]:
    """The values-file examples of the page: YAML blocks that set `config:`."""
    blocks = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(), re.S)
    return [
        values for values in map(yaml.safe_load, blocks) if isinstance(values, dict) and "config" in values
    ]


def test_the_node_pools_example_is_valid_for_the_chart_and_the_server() -> None:
    found = [values for values in examples() if values["config"].get("limitAware", {}).get("nodePools")]
    assert found, "docs/helm.md has no values-file example of config.limitAware.nodePools"
    for values in found:
        jsonschema.validate({**VALUES, **values, "config": {**VALUES["config"], **values["config"]}}, SCHEMA)
        config = parse_config(
            {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration", **values["config"]}
        )
        assert [pool.name for pool in config.limit_aware.node_pools] == [
            pool["name"] for pool in values["config"]["limitAware"]["nodePools"]
        ]
