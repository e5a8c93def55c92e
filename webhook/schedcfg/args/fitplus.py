"""Koordinator's NodeResourcesFitPlus args (``NodeResourcesFitPlusArgs``; design documents say ``ResourceTypesArgs``).

Two readers, two entries:

* limitguard's extender scores with these args (``ARGS``, ``LEGACY_ARGS``): its schema is strict about
  values too (a strategy of MostAllocated or LeastAllocated, weights 1..100, real resource names).
* koord-scheduler v1.8 (``KOORD_ARGS``) decodes them strictly but checks no value (no defaulting, no
  validation function at v1.8.0 or on main); its scorer (noderesourcefitplus, resourceScorer) gives a
  resource of any other strategy 0 points, leaves out a weight of 0 and averages by the weights, so a
  negative weight can push the score outside 0..100. Those are warnings that say what happens. It
  registers no ``ResourceTypesArgs`` kind: the plugin's constructor refuses such args, so koord-scheduler
  does not start (``KOORD_LEGACY_ARGS``).
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ..report import Finding, invalid, warning
from ..rules.releases import Release
from .common import as_dict, as_int, resource_name_errors
from .kind import ArgsKind

STRATEGIES = ("LeastAllocated", "MostAllocated")
KOORD_SCHEMA_DIR = "args/koordinator"


def validate(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
    findings: list[Finding] = []
    for name in as_dict(args.get("resources")):
        findings += resource_name_errors(str(name), path_join(path, "resources", str(name)))
    return findings


def koord_validate(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
    """What koord-scheduler's scorer does with values it accepts without a check."""
    findings: list[Finding] = []
    for name, spec in as_dict(args.get("resources")).items():
        entry_path = path_join(path, "resources", str(name))
        if resource_name_errors(str(name), entry_path):
            findings.append(
                warning(
                    entry_path,
                    f"{json.dumps(name)} is not a valid resource name: no pod requests it, so "
                    "koord-scheduler never scores it",
                    "fitplus.resource-name",
                    name,
                )
            )
        spec = as_dict(spec)
        strategy = spec.get("type")
        if isinstance(strategy, str | None) and strategy not in STRATEGIES:
            shown = "no type" if strategy is None else f"type {json.dumps(strategy)}"
            findings.append(
                warning(
                    path_join(entry_path, "type"),
                    f"{shown}: koord-scheduler scores this resource 0 on every node (only "
                    f"{' and '.join(STRATEGIES)} score) and still counts its weight",
                    "fitplus.strategy",
                    strategy,
                )
            )
        weight = as_int(spec.get("weight"))
        if "weight" in spec and weight is None:
            continue  # not an integer: a decoding error (schema)
        if not weight:
            findings.append(
                warning(
                    path_join(entry_path, "weight"),
                    "weight 0 (or none): koord-scheduler leaves this resource out of the score",
                    "fitplus.weight-zero",
                    weight or 0,
                )
            )
        elif weight < 0:
            findings.append(
                warning(
                    path_join(entry_path, "weight"),
                    f"negative weight {weight}: the weighted average can leave 0..100, and a score "
                    "outside that range fails the scheduling cycle of the pod",
                    "fitplus.weight-negative",
                    weight,
                )
            )
    return findings


def koord_refuses_legacy_kind(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
    detail = (
        f"koord-scheduler decodes only {json.dumps(ARGS.kind)} for NodeResourcesFitPlus (ResourceTypesArgs "
        "is a name from the design document): the plugin refuses these args and koord-scheduler does not start"
    )
    return [invalid(path_join(path, "kind"), args.get("kind"), detail, "args.kind-registered")]


ARGS = ArgsKind("NodeResourcesFitPlusArgs", "NodeResourcesFitPlus", validate, in_tree=False)
LEGACY_ARGS = ArgsKind("ResourceTypesArgs", "NodeResourcesFitPlus", validate, in_tree=False)
KOORD_ARGS = ArgsKind(
    "NodeResourcesFitPlusArgs",
    "NodeResourcesFitPlus",
    koord_validate,
    in_tree=False,
    schema_dir=KOORD_SCHEMA_DIR,
)
KOORD_LEGACY_ARGS = ArgsKind(
    "ResourceTypesArgs", "NodeResourcesFitPlus", koord_refuses_legacy_kind, in_tree=False
)
