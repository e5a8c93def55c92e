"""The extender's scorer configuration: a pure parser over the raw `extender:` mapping.

Proposed section of limitguard's configuration file (see docs/extender.md):

    extender:
      scorers:
      - name: LimitAware              # LimitAware | NodeResourcesFitPlus | ScarceResourceAvoidance | PodState
        weight: 2                     # 1..100, relative to the other scorers
        args:                         # the plugin's own args kind, validated by `limitguard validate`'s rules
          kind: LimitAwareArgs
          scoringResourceWeights: {cpu: 1, memory: 1}

Scorer args are exactly the args kinds of the scheduler configuration validator, checked with the
same JSON Schemas and rules, so a snippet that passes `limitguard validate` in a pluginConfig entry
passes here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.core.fielderrors import FieldError, FieldErrors
from limitguard.core.paths import path_join
from limitguard.core.ratios import parse_ratio_map
from limitguard.core.scoring import (
    DEFAULT_SCORERS,
    SCORER_NAMES,
    ScorerConfig,
    fitplus,
    limitaware,
    podstate,
    scarce,
)
from limitguard.core.scoring.combine import ScorerArgs
from limitguard.errors import LimitguardError
from limitguard.schedcfg.rules.plugin_args import check_plugin_args

_SCORER_FIELDS = frozenset({"name", "weight", "args"})
MAX_SCORER_WEIGHT = 100


class ExtenderConfigError(LimitguardError, ValueError):
    """Invalid extender configuration; each problem is `field.path: what is wrong`."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid extender configuration:\n  " + "\n  ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ExtenderConfig:
    scorers: tuple[ScorerConfig, ...] = DEFAULT_SCORERS


def _args_problems(plugin: str, args: Mapping[str, Any], path: str) -> list[FieldError]:
    """Errors from the scheduler-config validator's own check of one args document."""
    return [
        FieldError(finding.path, finding.message)
        for finding in check_plugin_args(plugin, dict(args), path, "v1")
        if finding.severity == "error"
    ]


def _typed_args(name: str, args: Mapping[str, Any]) -> ScorerArgs:
    """Schema-valid args as the scorer's dataclass; a field left out keeps the scorer's default."""
    if name == limitaware.NAME:
        base = limitaware.LimitAwareArgs()
        weights = args.get("scoringResourceWeights")
        ratios = args.get("defaultLimitToAllocatableRatio")
        return limitaware.LimitAwareArgs(
            weights=dict(weights) if weights else base.weights,
            default_ratios=parse_ratio_map(ratios) if ratios is not None else None,
        )
    if name == fitplus.NAME:
        resources = args.get("resources")
        if not resources:
            return fitplus.FitPlusArgs()
        return fitplus.FitPlusArgs(
            {
                resource: fitplus.ResourceStrategy(fitplus.Strategy(spec["type"]), int(spec["weight"]))
                for resource, spec in resources.items()
            }
        )
    if name == scarce.NAME:
        resources = args.get("resources")
        return (
            scarce.ScarceResourceArgs(frozenset(resources))
            if resources is not None
            else scarce.ScarceResourceArgs()
        )
    return None


def _scorer(raw: Any, path: str, errors: FieldErrors) -> tuple[str | None, ScorerConfig | None]:
    """One scorer's name (None when it has none limitguard knows) and its configuration (None when
    something in it is wrong). Its weight and its args are checked apart: either can be wrong alone."""
    if not isinstance(raw, Mapping):
        errors.add(path, "must be an object with name, weight and args")
        return None, None
    for unknown in sorted(set(raw) - _SCORER_FIELDS, key=str):
        errors.add(path_join(path, str(unknown)), "unknown field (expected name, weight, args)")
    name = raw.get("name")
    if name not in SCORER_NAMES:
        supported = ", ".join(f'"{known}"' for known in SCORER_NAMES)
        errors.add(path_join(path, "name"), f"Unsupported value: {name!r}: supported values: {supported}")
        return None, None  # which args kind applies depends on the name
    before = len(errors)
    weight = raw.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= MAX_SCORER_WEIGHT:
        errors.add(
            path_join(path, "weight"),
            f"Invalid value: {weight!r}: must be an integer in [1, {MAX_SCORER_WEIGHT}]",
        )
    args, args_path = raw.get("args"), path_join(path, "args")
    if args is not None and errors.invalid(args_path):
        pass  # reported already (the JSON Schema's "must be of type object")
    elif args is None:
        pass
    elif not isinstance(args, Mapping):
        errors.add(args_path, "must be an object")
    elif name == podstate.NAME:
        if args:
            errors.add(args_path, "PodState takes no args")
        args = None
    else:
        errors.extend(_args_problems(name, args, args_path))
    if len(errors) > before or errors.invalid(path):
        return name, None
    return name, ScorerConfig(name, weight, _typed_args(name, args) if args is not None else None)


def read_extender_config(raw: Any, errors: FieldErrors, where: str = "extender") -> ExtenderConfig:
    """The extender configuration from the raw `extender:` mapping, every problem added to *errors*
    (what they already hold is not judged again); it means something only while *errors* is empty.
    None or an empty mapping gives the defaults."""
    if raw is None or errors.covers(where):
        return ExtenderConfig()
    if not isinstance(raw, Mapping):
        errors.add(where, "must be an object")
        return ExtenderConfig()
    for unknown in sorted(set(raw) - {"scorers"}, key=str):
        errors.add(path_join(where, str(unknown)), "unknown field (expected scorers)")
    scorers_raw, scorers_path = raw.get("scorers"), path_join(where, "scorers")
    if scorers_raw is None or errors.covers(scorers_path):
        return ExtenderConfig()
    if not isinstance(scorers_raw, list) or not scorers_raw:
        errors.add(scorers_path, "must be a non-empty list")
        return ExtenderConfig()
    scorers: list[ScorerConfig] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(scorers_raw):
        path = path_join(scorers_path, index)
        name, scorer = _scorer(item, path, errors)
        if name is None:
            continue
        if name in seen:
            errors.add(
                path_join(path, "name"),
                f"Duplicate value: {name!r} (also {path_join(scorers_path, seen[name])})",
            )
            continue
        seen[name] = index
        if scorer is not None:
            scorers.append(scorer)
    return ExtenderConfig(tuple(scorers))


def extender_config_from_mapping(raw: Mapping[str, Any] | None, where: str = "extender") -> ExtenderConfig:
    """Build the extender configuration from the raw `extender:` mapping; raises ExtenderConfigError
    with every problem, not only the first. None or an empty mapping gives the defaults."""
    errors = FieldErrors()
    config = read_extender_config(raw, errors, where)
    if errors:
        raise ExtenderConfigError(errors.texts())
    return config
