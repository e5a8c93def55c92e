"""What kube-scheduler's framework refuses (or silently changes) when it builds each profile.

The framework (pkg/scheduler/framework/runtime/framework.go) merges the defaults of default_plugins.go
with the profile, expands multiPoint to every extension point a plugin implements, and then fails on a
plugin that does not exist, a plugin listed at a point it does not implement, a plugin listed twice in one
point, anything but exactly one queue sort plugin (``queue_sort``), or no bind plugin. Unknown names are
errors only when they are a near miss of an in-tree name: out-of-tree builds register their own plugins.
A score plugin that outweighs all others is a warning (``score_weights``).
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ..args.projects import owners
from ..args.registry import ARGS_KINDS
from ..fields.findings import Finding, duplicate, info, invalid, warning
from ..fields.values import as_dict, as_list
from ..tables.plugin_tables import (
    OUT_OF_TREE_QUEUE_SORT,
    POINTS,
    UNCONFIRMED_POINTS,
    WEIGHTED_POINTS,
    added_in,
    extension_points,
    invalid_in_v1,
    removal_hint,
)
from ..tables.readers import Reader
from .effective import enabled_plugins, plugin_names
from .queue_sort import check_queue_sort_and_bind
from .score_weights import check_score_dominance

__all__ = ["KNOWN_OUT_OF_TREE", "check_profile", "near_miss"]

#: Out-of-tree plugins limitguard knows (its args registry, known queue sorts): a note, not a warning.
KNOWN_OUT_OF_TREE = frozenset(
    {entry.plugin for entry in ARGS_KINDS.values() if not entry.in_tree} | OUT_OF_TREE_QUEUE_SORT
)


def near_miss(name: str, candidates: list[str]) -> str | None:
    """An in-tree name ``name`` is probably a typo of (case, or at most two edits on a long name)."""
    for candidate in candidates:
        if name.lower() == candidate.lower():
            return candidate
    limit = 2 if len(name) >= 8 else 1
    best = min(candidates, key=lambda c: _distance(name, c), default=None)
    if best is not None and _distance(name, best) <= limit:
        return best
    return None


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def check_profile(profile: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """Framework checks of one (defaulted) profile."""
    findings: list[Finding] = []
    table = reader.registered_plugins()
    plugins = as_dict(profile.get("plugins"))
    points = (*extension_points(reader.release), "multiPoint")
    for point, plugin_set in plugins.items():
        if point not in points:
            continue  # unknown extension points are decoding errors (schema, rules.fields)
        findings += _check_enabled_list(plugin_set, path_join(path, "plugins", point), point, reader, table)
        for j, name in enumerate(plugin_names(plugin_set, "disabled")):
            hint = removal_hint(name, reader.release) if name not in table else None
            if hint:
                findings.append(
                    warning(
                        path_join(path, "plugins", point, "disabled", j),
                        f"plugin {json.dumps(name)} does not exist in Kubernetes {reader.release.name} ({hint}); "
                        "disabling it has no effect",
                        "plugins.removed-disabled",
                        name,
                    )
                )
    findings += _check_plugin_configs_enabled(profile, path, reader)
    findings += check_queue_sort_and_bind(profile, path, reader)
    findings += check_score_dominance(profile, path, reader)
    findings += _unreleased_plugins(profile, path, reader)
    return findings


def _where(name: str, reader: Reader) -> str:
    """Who registers ``name``: the reading scheduler's own release, else Kubernetes'."""
    scheduler = reader.scheduler
    if name in scheduler.plugins:
        return scheduler.label
    if scheduler.build_name is None:
        return f"Kubernetes {reader.release.name}"
    return reader.label


def _unreleased_plugins(profile: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """A note for each plugin judged as the change that adds it has it, not as released builds do."""
    unreleased = reader.scheduler.unreleased
    return [
        info(path_join(path, "plugins"), why, "plugins.unreleased", name)
        for name, why in unreleased.items()
        if name in enabled_plugins(profile, reader)
    ]


def _check_enabled_list(
    plugin_set: Any, point_path: str, point: str, reader: Reader, table: dict[str, frozenset[str] | None]
) -> list[Finding]:
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for j, plugin in enumerate(as_list(as_dict(plugin_set).get("enabled"))):
        name = as_dict(plugin).get("name")
        if not isinstance(name, str):
            continue
        item = path_join(point_path, "enabled", j)
        if name in seen:
            findings.append(
                duplicate(
                    item, name, "plugins.unique-in-point", f"already enabled at {point}.enabled[{seen[name]}]"
                )
            )
        seen.setdefault(name, j)
        if name in table:
            points = table[name]
            if point != "multiPoint" and points is not None and point not in points:
                detail = (
                    f"plugin {json.dumps(name)} does not extend the {point} extension point in "
                    f"{_where(name, reader)} (it implements {', '.join(p for p in POINTS if p in points)})"
                    + reader.elsewhere(lambda b, n=name, p=point: p in b.plugins.get(n, ()), f"it at {point}")
                )
                if point in UNCONFIRMED_POINTS:
                    findings.append(
                        warning(
                            item,
                            f"{detail}, as far as limitguard knows: kube-scheduler refuses to start if so",
                            "plugins.extension-point",
                            name,
                        )
                    )
                else:
                    findings.append(invalid(item, name, detail, "plugins.extension-point"))
        else:
            findings += _unknown_plugin(name, item, point, reader, table)
        if "weight" in as_dict(plugin) and point not in (*WEIGHTED_POINTS, "multiPoint"):
            findings.append(
                warning(
                    path_join(item, "weight"),
                    f"weight is only used at the {' and '.join(_weighted(reader))} extension "
                    f"point(s); ignored at {point}",
                    "plugins.weight-outside-score",
                    as_dict(plugin).get("weight"),
                )
            )
    return findings


def _weighted(reader: Reader) -> list[str]:
    return [p for p in extension_points(reader.release) if p in WEIGHTED_POINTS]


def _unknown_plugin(
    name: str, item: str, point: str, reader: Reader, table: dict[str, frozenset[str] | None]
) -> list[Finding]:
    hint = removal_hint(name, reader.release)
    if hint:
        if point != "multiPoint" and invalid_in_v1(name, reader.release):
            return []  # validation.go already reports it (rules.config)
        return [
            invalid(
                item,
                name,
                f"plugin does not exist in Kubernetes {reader.release.name}: {hint}",
                "plugins.removed",
            )
        ]
    since = added_in(name)
    if since is not None and reader.release.minor < since:
        return [
            invalid(
                item,
                name,
                f"plugin {json.dumps(name)} is registered from Kubernetes 1.{since}; "
                f"{reader.label} does not have it and refuses to start",
                "plugins.unknown",
            )
        ]
    close = near_miss(name, sorted(table))
    if close is not None:
        return [
            invalid(
                item,
                name,
                f"not a plugin of Kubernetes {reader.release.name}; did you mean {json.dumps(close)}?",
                "plugins.unknown",
            )
        ]
    scheduler = reader.scheduler
    if scheduler.build_name is not None:
        return [
            invalid(
                item,
                name,
                f"{scheduler.label} does not register this plugin (nor does Kubernetes {reader.release.name}): "
                "it refuses to start" + reader.elsewhere(lambda b: name in b.plugins, "it"),
                "plugins.unknown",
            )
        ]
    if name in KNOWN_OUT_OF_TREE:
        return [
            info(
                item,
                f"out-of-tree plugin {json.dumps(name)}: needs a scheduler build that registers it "
                "(koord-scheduler, scheduler-plugins)",
                "plugins.out-of-tree",
                name,
            )
        ]
    projects = owners(name)
    hint = (
        f"; {' and '.join(projects)} register{'s' if len(projects) == 1 else ''} it: name the scheduler with --scheduler"
        if projects
        else " (out-of-tree schedulers are)"
    )
    return [
        warning(
            item,
            f"plugin {json.dumps(name)} is not an in-tree plugin of Kubernetes {reader.release.name}: kube-scheduler "
            f"refuses to start unless it is built with this plugin{hint}",
            "plugins.out-of-tree",
            name,
        )
    ]


def _check_plugin_configs_enabled(profile: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    enabled = enabled_plugins(profile, reader)
    findings: list[Finding] = []
    for j, entry in enumerate(as_list(profile.get("pluginConfig"))):
        name = as_dict(entry).get("name")
        if isinstance(name, str) and name not in enabled and not invalid_in_v1(name, reader.release):
            findings.append(
                warning(
                    path_join(path, "pluginConfig", j),
                    f"args are given for plugin {json.dumps(name)} but this profile does not enable it",
                    "plugin-config.not-enabled",
                    name,
                )
            )
    return findings
