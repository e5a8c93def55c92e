"""PodTopologySpreadArgs: defaultingType vs defaultConstraints, label-key topologyKeys, no selector."""

from __future__ import annotations

from typing import Any

from limitguard.core.names import is_qualified_name
from limitguard.core.paths import path_join

from ..fields.findings import Finding, duplicate, forbidden, invalid
from ..fields.values import as_dict, as_list
from ..tables.readers import Reader
from .kind import ArgsKind


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    if not args.get("defaultingType"):
        args["defaultingType"] = "System"
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    constraints = as_list(args.get("defaultConstraints"))
    defaulting = args.get("defaultingType")
    if defaulting == "System" and constraints:
        findings.append(
            invalid(
                path_join(path, "defaultingType"),
                defaulting,
                'must be "List" when .defaultConstraints are not empty (it defaults to "System")',
                "topology-spread.defaulting-type",
            )
        )
    seen: dict[tuple[Any, Any], int] = {}
    for i, constraint in enumerate(constraints):
        constraint = as_dict(constraint)
        item_path = path_join(path, "defaultConstraints", i)
        key = constraint.get("topologyKey")
        if isinstance(key, str) and key and not is_qualified_name(key):
            findings.append(
                invalid(
                    path_join(item_path, "topologyKey"),
                    key,
                    "must be a qualified name (label key)",
                    "topology-spread.topology-key",
                )
            )
        if "labelSelector" in constraint:
            findings.append(
                forbidden(
                    path_join(item_path, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                    "topology-spread.no-selector",
                )
            )
        when = constraint.get("whenUnsatisfiable")
        marker = (key, when if isinstance(when, str) else None)
        if isinstance(key, str) and marker in seen:
            findings.append(
                duplicate(
                    item_path,
                    f"{{{key}, {marker[1]}}}",
                    "topology-spread.unique-constraint",
                    f"same topologyKey and whenUnsatisfiable as defaultConstraints[{seen[marker]}]",
                )
            )
        elif isinstance(key, str):
            seen[marker] = i
    return findings


ARGS = ArgsKind("PodTopologySpreadArgs", "PodTopologySpread", validate, default)
