"""Koordinator's NodeResourcesFitPlus args (``NodeResourcesFitPlusArgs``; design documents say ``ResourceTypesArgs``).

Two readers, two entries:

* limitguard's extender scores with these args (``ARGS``, ``LEGACY_ARGS``): its schema is strict about
  values too (a strategy of MostAllocated or LeastAllocated, weights 1..100, real resource names).
* koord-scheduler v1.8 (``KOORD_ARGS``) decodes them strictly but checks no value: no defaulting and no
  validation function at v1.8.0 or on main (pkg/scheduler/apis/config/validation has none for this
  kind), and the plugin's New (noderesourcefitplus/node_resources_fit_plus.go:48) only asserts the type.
  It starts with any value; what its scorer (node_resource_fit_plus_utils.go:58-87, resourceScorer)
  then does makes three of them errors here, each saying so: a type other than MostAllocated or
  LeastAllocated scores the resource 0 on every node and still adds its weight (the switch has no
  default); a negative weight can push the weighted average outside 0..100, which the framework's
  RunScorePlugins refuses ("returns an invalid score"), failing the pod's scheduling cycle; an invalid
  resource name matches no pod's request. A weight of 0 only leaves the resource out: a warning.
  It registers no ``ResourceTypesArgs`` kind: the plugin's constructor refuses such args, so
  koord-scheduler does not start (``KOORD_LEGACY_ARGS``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, invalid, required, unsupported, warning
from ..fields.values import as_dict, as_int
from ..tables.readers import KOORD_SCHEDULER, Reader
from .common import koord_starts, resource_name_errors
from .kind import ArgsKind

STRATEGIES = ("LeastAllocated", "MostAllocated")
KOORD_SCHEMA_DIR = "args/koordinator"


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    for name in as_dict(args.get("resources")):
        findings += resource_name_errors(str(name), path_join(path, "resources", str(name)))
    return findings


def _strategy_error(strategy: str | None, weight: int, path: str, reader: Reader) -> Finding:
    """A type resourceScorer has no case for: the resource scores 0 and its weight still counts."""
    weighted = f"still counts its weight {weight}" if weight else "with weight 0 the entry does nothing"
    effect = f"NodeResourcesFitPlus scores this resource 0 on every node and {weighted}"
    if strategy == "RequestedToCapacityRatio":
        effect = f"RequestedToCapacityRatio is a NodeResourcesFit strategy the plugin lacks: {effect}"
    if strategy is None:
        listed = " or ".join(json.dumps(s) for s in STRATEGIES)
        detail = f"one of {listed}; {reader.scheduler_label(KOORD_SCHEDULER)} starts without it, but {effect}"
        return required(path, detail, "fitplus.strategy")
    finding = unsupported(path, strategy, STRATEGIES, "fitplus.strategy")
    return dataclasses.replace(finding, message=f"{finding.message} ({koord_starts(reader)} {effect})")


def koord_validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """The documented domain of values koord-scheduler accepts without a check, and what it would do."""
    findings: list[Finding] = []
    for name, spec in as_dict(args.get("resources")).items():
        entry_path = path_join(path, "resources", str(name))
        findings += resource_name_errors(
            str(name),
            entry_path,
            f"{koord_starts(reader)} no pod can request such a resource, so NodeResourcesFitPlus never "
            "scores it",
            "fitplus.resource-name",
        )
        spec = as_dict(spec)
        weight = as_int(spec.get("weight"))
        if "weight" in spec and weight is None:
            continue  # not an integer: a decoding error (schema), koord-scheduler does not start
        strategy = spec.get("type")
        if isinstance(strategy, str | None) and strategy not in STRATEGIES:
            findings.append(_strategy_error(strategy, weight or 0, path_join(entry_path, "type"), reader))
        if not weight:
            findings.append(
                warning(
                    path_join(entry_path, "weight"),
                    f"weight 0 (or none): {reader.scheduler_label(KOORD_SCHEDULER)} leaves this "
                    "resource out of the score",
                    "fitplus.weight-zero",
                    weight or 0,
                )
            )
        elif weight < 0:
            findings.append(
                invalid(
                    path_join(entry_path, "weight"),
                    weight,
                    f"must not be negative: {koord_starts(reader)} for a pod that requests this resource "
                    "and another one listed here the weighted average can leave 0..100, and the framework "
                    'then fails that pod\'s scheduling cycle ("returns an invalid score")',
                    "fitplus.weight-negative",
                )
            )
    return findings


def koord_refuses_legacy_kind(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    reader = reader.scheduler_label(KOORD_SCHEDULER)
    detail = (
        f"{reader} decodes only {json.dumps(ARGS.kind)} for NodeResourcesFitPlus (ResourceTypesArgs is a "
        f"name from the design document): the plugin refuses these args and {reader} does not start"
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
