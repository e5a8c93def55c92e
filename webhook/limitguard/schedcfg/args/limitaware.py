"""LimitAware args: weights and default ratios keyed by real resource names.

The design of Koordinator PR #1486 (closed, unmerged), which limitguard implements. Two readers:

* limitguard's extender (``ARGS``): weights 1..100 as written.
* a koord-scheduler build carrying that PR (``KOORD_ARGS``): its SetDefaults_LimitAwareArgs turns an
  empty ``scoringResourceWeights`` into cpu: 1, memory: 1 and a weight of 0 into 1 (a warning: the value
  written is not the value used); ValidateLimitAwareArgs then refuses weights outside 1..100 and checks
  no resource name, so it starts with an invalid one, which its Score never finds on a node (pkg/scheduler/
  plugins/limitaware/scoring.go at 9ddd4fb2 scores only resources with a limit capacity): an error here.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, warning
from ..fields.values import as_dict, as_int
from ..tables.readers import KOORD_SCHEDULER, Reader
from .common import resource_name_errors
from .kind import ArgsKind

DEFAULT_WEIGHTS: dict[str, int] = {"cpu": 1, "memory": 1}


def default(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    weights = args.get("scoringResourceWeights")
    if weights is None or weights == {}:
        args["scoringResourceWeights"] = dict(DEFAULT_WEIGHTS)
        return []
    findings: list[Finding] = []
    for name, weight in as_dict(weights).items():
        if as_int(weight) == 0:
            weight_path = path_join(path, "scoringResourceWeights", str(name))
            findings.append(
                warning(
                    weight_path,
                    "weight 0 is defaulted to 1 (LimitAware's defaulting treats 0 as unset)",
                    "defaults.zero-replaced",
                    0,
                )
            )
            weights[name] = 1
    return findings


def _name_errors(args: dict[str, Any], path: str, consequence: str = "") -> list[Finding]:
    findings: list[Finding] = []
    for field_name in ("scoringResourceWeights", "defaultLimitToAllocatableRatio"):
        for name in as_dict(args.get(field_name)):
            findings += resource_name_errors(str(name), path_join(path, field_name, str(name)), consequence)
    return findings


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    return _name_errors(args, path)


def koord_validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    consequence = (
        f"{reader.scheduler_label(KOORD_SCHEDULER)} carrying LimitAware starts with it, but no node has "
        "such a resource, so the plugin never limits or scores it"
    )
    return _name_errors(args, path, consequence)


ARGS = ArgsKind("LimitAwareArgs", "LimitAware", validate, in_tree=False)
KOORD_ARGS = ArgsKind(
    "LimitAwareArgs", "LimitAware", koord_validate, default, in_tree=False, schema_dir="args/koordinator"
)
