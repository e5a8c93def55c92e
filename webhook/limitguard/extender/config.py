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


def _args_problems(plugin: str, args: Mapping[str, Any], path: str) -> list[str]:
    """Errors from the scheduler-config validator's own check of one args document."""
    from limitguard.schedcfg.rules.plugin_args import check_plugin_args

    return [
        str(finding)
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


def _scorer(raw: Any, path: str, problems: list[str]) -> ScorerConfig | None:
    if not isinstance(raw, Mapping):
        problems.append(f"{path}: must be an object with name, weight and args")
        return None
    for unknown in sorted(set(raw) - _SCORER_FIELDS, key=str):
        problems.append(f"{path_join(path, str(unknown))}: unknown field (expected name, weight, args)")
    name = raw.get("name")
    if name not in SCORER_NAMES:
        supported = ", ".join(f'"{known}"' for known in SCORER_NAMES)
        problems.append(
            f"{path_join(path, 'name')}: Unsupported value: {name!r}: supported values: {supported}"
        )
        return None
    weight = raw.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= MAX_SCORER_WEIGHT:
        problems.append(
            f"{path_join(path, 'weight')}: Invalid value: {weight!r}: must be an integer in [1, {MAX_SCORER_WEIGHT}]"
        )
        return None
    args = raw.get("args")
    if args is None:
        return ScorerConfig(name, weight)
    if not isinstance(args, Mapping):
        problems.append(f"{path_join(path, 'args')}: must be an object")
        return None
    if name == podstate.NAME:
        if args:
            problems.append(f"{path_join(path, 'args')}: PodState takes no args")
        return ScorerConfig(name, weight)
    found = _args_problems(name, args, path_join(path, "args"))
    if found:
        problems.extend(found)
        return None
    return ScorerConfig(name, weight, _typed_args(name, args))


def extender_config_from_mapping(raw: Mapping[str, Any] | None, where: str = "extender") -> ExtenderConfig:
    """Build the extender configuration from the raw `extender:` mapping; raises ExtenderConfigError.

    Every problem is reported, not only the first. None or an empty mapping gives the defaults.
    """
    if raw is None:
        return ExtenderConfig()
    if not isinstance(raw, Mapping):
        raise ExtenderConfigError([f"{where}: must be an object"])
    problems = [
        f"{path_join(where, str(unknown))}: unknown field (expected scorers)"
        for unknown in sorted(set(raw) - {"scorers"}, key=str)
    ]
    scorers_raw = raw.get("scorers")
    if scorers_raw is None:
        if problems:
            raise ExtenderConfigError(problems)
        return ExtenderConfig()
    if not isinstance(scorers_raw, list) or not scorers_raw:
        raise ExtenderConfigError([*problems, f"{path_join(where, 'scorers')}: must be a non-empty list"])
    scorers: list[ScorerConfig] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(scorers_raw):
        path = path_join(where, "scorers", index)
        scorer = _scorer(item, path, problems)
        if scorer is None:
            continue
        if scorer.name in seen:
            problems.append(
                f"{path_join(path, 'name')}: Duplicate value: {scorer.name!r} (also scorers[{seen[scorer.name]}])"
            )
            continue
        seen[scorer.name] = index
        scorers.append(scorer)
    if problems:
        raise ExtenderConfigError(problems)
    return ExtenderConfig(tuple(scorers))
