"""NodeResourceTopologyMatchArgs of scheduler-plugins (apis/config/v1 SetDefaults_NodeResourceTopologyMatchArgs,
apis/config/validation ValidateNodeResourceTopologyMatchArgs, called by pkg/noderesourcetopology New; the cache
settings as pkg/noderesourcetopology/pluginhelpers.go, cache/overreserve.go and podprovider read them; tag
v0.34.7).

The cache enums are never checked: an unknown value starts the scheduler and acts as the fallback branch of
the code that reads it, so those are warnings.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...fields.values import as_dict, as_list
from ...tables.readers import Reader
from ..common import resource_name_warnings
from ..kind import ArgsKind
from .common import SCHEMA_DIR, UNRELEASED_SCHEMA_DIR, as_go_int, drop_nulls, replaced, unknown_value

STRATEGIES = ("MostAllocated", "BalancedAllocation", "LeastAllocated", "LeastNUMANodes")
DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
CACHE_DEFAULTS = {"foreignPodsDetect": "All", "resyncMethod": "Autodetect", "informerMode": "Dedicated"}

#: cache field -> (the values the code names, what any other value does).
CACHE_VALUES: dict[str, tuple[tuple[str, ...], str]] = {
    "foreignPodsDetect": (
        ("None", "All", "OnlyExclusiveResources"),
        'tracks all foreign pods, as "All" does',
    ),
    "resyncMethod": (
        ("Autodetect", "All", "OnlyExclusiveResources"),
        'fingerprints all pods at resync, as "All" does',
    ),
    "informerMode": (("Shared", "Dedicated"), 'uses the shared pod informer, as "Shared" does'),
    "resyncScope": (
        ("All", "OnlyResources"),
        'resyncs on resource changes only, as "OnlyResources" does',
    ),
}


def default(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    drop_nulls(args)
    strategy = args.get("scoringStrategy")
    for struct in (strategy, args.get("cache"), *as_list(as_dict(strategy).get("resources"))):
        drop_nulls(struct)
    findings = _unused_cache_settings(args, path)
    strategy = args.setdefault("scoringStrategy", {"type": "LeastAllocated"})
    if not isinstance(strategy, dict):
        return findings
    if strategy.get("resources") in (None, []):
        strategy["resources"] = [dict(r) for r in DEFAULT_RESOURCES]
    elif isinstance(strategy["resources"], list):  # a null item decodes as an empty ResourceSpec
        strategy["resources"] = [{} if r is None else r for r in strategy["resources"]]
    for i, resource in enumerate(as_list(strategy.get("resources"))):
        if isinstance(resource, dict) and as_go_int(resource.get("weight", 0)) == 0:
            if "weight" in resource:
                findings.append(
                    replaced(
                        path_join(path, "scoringStrategy", "resources", i, "weight"),
                        0,
                        1,
                        "a weight of 0 is unset",
                        reader,
                    )
                )
            resource["weight"] = 1
    cache = args.setdefault("cache", {})
    if isinstance(cache, dict):
        for name, value in CACHE_DEFAULTS.items():
            cache.setdefault(name, value)
    return findings


def _unused_cache_settings(args: dict[str, Any], path: str) -> list[Finding]:
    """Settings the chosen cache mode never reads (initNodeTopologyInformer: discardReservedNodes first,
    then a period <= 0 means no cache)."""
    discard = args.get("discardReservedNodes") is True
    period = as_go_int(args.get("cacheResyncPeriodSeconds"))
    findings: list[Finding] = []
    if discard and period is not None and period > 0:
        findings.append(
            warning(
                path_join(path, "cacheResyncPeriodSeconds"),
                "has no effect: discardReservedNodes is true and takes precedence (no resync cache)",
                "sigs.topologymatch.unused-cache",
                period,
            )
        )
    if as_dict(args.get("cache")) and (discard or period is None or period <= 0):
        why = "discardReservedNodes is true" if discard else "cacheResyncPeriodSeconds is not above 0"
        findings.append(
            warning(
                path_join(path, "cache"),
                f"has no effect: {why}, so the plugin runs without its resync cache",
                "sigs.topologymatch.unused-cache",
            )
        )
    return findings


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    strategy = as_dict(args.get("scoringStrategy"))
    kind = strategy.get("type", "")
    type_path = path_join(path, "scoringStrategy", "type")
    if isinstance(kind, str) and kind not in STRATEGIES:
        findings.append(invalid(type_path, kind, "invalid ScoringStrategyType", "sigs.topologymatch.type"))
    resources_path = path_join(path, "scoringStrategy", "resources")
    for i, resource in enumerate(as_list(strategy.get("resources"))):
        resource = as_dict(resource)
        findings += resource_name_warnings(resource.get("name"), path_join(resources_path, i, "name"))
        weight = as_go_int(resource.get("weight"))
        if weight is not None and weight < 0:
            findings.append(
                warning(
                    path_join(resources_path, i, "weight"),
                    f"weight {weight} is not checked and scores as 1 (score.go uses 1 for any weight below 1)",
                    "sigs.topologymatch.weight",
                    weight,
                )
            )
    cache = as_dict(args.get("cache"))
    for name, (known, consequence) in CACHE_VALUES.items():
        value = cache.get(name)
        if isinstance(value, str) and value not in known:
            findings.append(unknown_value(path_join(path, "cache", name), value, known, consequence))
    return findings


ARGS = ArgsKind(
    "NodeResourceTopologyMatchArgs",
    "NodeResourceTopologyMatch",
    validate,
    default,
    in_tree=False,
    schema_dir=SCHEMA_DIR,
)


PREEMPTION_MODES = ("Disabled", "Enabled")


def default_unreleased(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """master (903da7df) adds preemptionMode, defaulted to Disabled."""
    findings = default(args, path, reader)
    args.setdefault("preemptionMode", "Disabled")
    return findings


def validate_unreleased(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings = validate(args, path, reader)
    mode = args.get("preemptionMode")
    if isinstance(mode, str) and mode not in PREEMPTION_MODES:
        findings.append(
            invalid(
                path_join(path, "preemptionMode"),
                mode,
                "invalid PreemptionMode",
                "sigs.topologymatch.preemption",
            )
        )
    return findings


UNRELEASED_ARGS = ArgsKind(
    "NodeResourceTopologyMatchArgs",
    "NodeResourceTopologyMatch",
    validate_unreleased,
    default_unreleased,
    in_tree=False,
    schema_dir=UNRELEASED_SCHEMA_DIR,
)
