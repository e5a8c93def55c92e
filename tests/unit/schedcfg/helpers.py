"""Shared helpers for the scheduler-configuration validator tests."""

from __future__ import annotations

import json
import re
from typing import Any

from limitguard.schedcfg import Report, validate_text
from limitguard.schedcfg.args.kind import ArgsKind
from limitguard.schedcfg.report import Finding
from limitguard.schedcfg.rules.plugin_args import check_kind
from limitguard.schedcfg.tables.readers import Reader
from tests.support import FIXTURES

V1 = "kubescheduler.config.k8s.io/v1"


def config(version: str = "v1", **fields: Any) -> dict[str, Any]:
    """A minimal KubeSchedulerConfiguration with extra top-level fields."""
    return {
        "apiVersion": f"kubescheduler.config.k8s.io/{version}",
        "kind": "KubeSchedulerConfiguration",
        **fields,
    }


def with_args(
    plugin: str, args: dict[str, Any], *, version: str = "v1", score: bool = True
) -> dict[str, Any]:
    """A single-profile config whose pluginConfig[0] gives ``args`` to ``plugin`` (enabled at score)."""
    profile: dict[str, Any] = {"schedulerName": "s", "pluginConfig": [{"name": plugin, "args": args}]}
    if score:
        profile["plugins"] = {"score": {"enabled": [{"name": plugin}]}}
    return config(version, profiles=[profile])


def check(document: dict[str, Any] | list[dict[str, Any]], scheduler: str = "auto") -> Report:
    """Validate a Python object (serialised as JSON, which is YAML) for ``scheduler``."""
    return validate_text(json.dumps(document), scheduler=scheduler)


def limitguard_view(document: dict[str, Any] | list[dict[str, Any]]) -> Report:
    """kube-scheduler's verdict with limitguard's own scorers' args as its extender reads them (strict
    values), whatever scheduler the plugins would point to."""
    return check(document, scheduler="kube-scheduler")


def messages(report: Report, severity: str = "error") -> list[str]:
    return [str(f) for f in report.findings if f.severity == severity]


def paths(report: Report, severity: str = "error") -> list[str]:
    return [f.path for f in report.findings if f.severity == severity]


def render_helm(template: str, values: dict[str, Any]) -> str:
    """Tiny Helm stand-in for the fixture templates: ``{{ .Values.x }}`` is substituted from ``values``
    (dotted keys), ``if`` / ``with`` / ``else`` / ``end`` blocks are kept or dropped by the truthiness of
    the value; any other directive inside a dropped block disappears with it. Enough for the koordinator
    chart templates, not a general renderer."""
    out: list[str] = []
    stack: list[bool] = []
    block = re.compile(r"^\s*\{\{-?\s*(if|with|else|end)\b\s*(\S*)?.*?-?\}\}\s*$")
    for line in template.splitlines():
        match = block.match(line)
        if match:
            word, expr = match.group(1), match.group(2)
            if word in ("if", "with"):
                stack.append(bool(values.get(expr)))
            elif word == "else":
                stack[-1] = not stack[-1]
            else:
                stack.pop()
            continue
        if all(stack):
            out.append(
                re.sub(r"\{\{-?\s*(\.Values\.[\w.]+)\s*-?\}\}", lambda m: str(values[m.group(1)]), line)
            )
    assert not stack, "unbalanced template blocks"
    return "\n".join(out) + "\n"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def fit_plus(resources: dict[str, Any], kind: str = "NodeResourcesFitPlusArgs") -> dict[str, Any]:
    """A config whose only args are NodeResourcesFitPlus's with these ``resources``."""
    return with_args("NodeResourcesFitPlus", {"kind": kind, "resources": resources})


def object_schemas(node: Any, *, nullable: bool = True) -> list[dict[str, Any]]:
    """Every object schema with properties under ``node``; ``nullable``: also those whose type is a list
    naming "object" (Go pointers the decoder takes as null)."""
    found = []
    if isinstance(node, dict):
        kinds = node.get("type")
        is_object = kinds == "object" or (nullable and isinstance(kinds, list) and "object" in kinds)
        if "properties" in node and is_object:
            found.append(node)
        for value in node.values():
            found += object_schemas(value, nullable=nullable)
    elif isinstance(node, list):
        for value in node:
            found += object_schemas(value, nullable=nullable)
    return found


def run_kind(entry: ArgsKind, args: dict[str, Any], reader: Reader) -> tuple[list[Finding], dict[str, Any]]:
    """One args kind as the validator runs it: schema, then defaulting, then its rules (paths below
    ``args``); returns the findings and the defaulted args."""
    decoded, rules, defaulted = check_kind(entry, args, "args", reader)
    return decoded + rules, defaulted


def assert_strict_args_schema(schema: dict[str, Any], kind: str, *, ref_describes: bool = False) -> None:
    """An args kind's schema names its kind and v1, is strict at every object and describes every field
    (``ref_describes``: a ``$ref`` to a described definition counts)."""
    assert schema["title"] == kind and schema["description"]
    assert schema["properties"]["kind"]["const"] == kind
    assert schema["properties"]["apiVersion"]["enum"] == [V1]
    objects = object_schemas(schema)
    assert schema in objects
    for obj in objects:
        assert obj.get("additionalProperties") is False, obj.get("title")
        for name, prop in obj["properties"].items():
            described = "description" in prop or (ref_describes and "$ref" in prop)
            assert described, f"{kind}: {obj.get('title')}.{name}"
