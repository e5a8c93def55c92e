"""What kube-scheduler's framework refuses (or silently changes) when it builds each profile.

The framework (pkg/scheduler/framework/runtime/framework.go) merges the defaults of default_plugins.go
with the profile, expands multiPoint to every extension point a plugin implements, and then fails on a
plugin that does not exist, a plugin listed at a point it does not implement, a plugin listed twice in one
point, anything but exactly one queue sort plugin, or no bind plugin. Unknown names are errors only when
they are a near miss of an in-tree name: out-of-tree builds register their own plugins.
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from .. import schedulers
from ..args.common import as_dict, as_int, as_list
from ..args.registry import ARGS_KINDS
from ..report import Finding, duplicate, format_value, info, invalid, warning
from .effective import (
    effective_point,
    effective_score_weights,
    enabled_plugins,
    merged_multipoint,
    plugin_names,
)
from .plugin_tables import (
    OUT_OF_TREE_QUEUE_SORT,
    POINTS,
    UNCONFIRMED_POINTS,
    WEIGHTED_POINTS,
    added_in,
    extension_points,
    invalid_in_v1,
    removal_hint,
)
from .releases import Release

__all__ = [
    "KNOWN_OUT_OF_TREE",
    "check_common_queue_sort",
    "check_profile",
    "effective_point",
    "effective_score_weights",
    "enabled_plugins",
    "merged_multipoint",
    "near_miss",
]

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


def check_profile(profile: dict[str, Any], path: str, release: Release) -> list[Finding]:
    """Framework checks of one (defaulted) profile."""
    findings: list[Finding] = []
    table = schedulers.registered_plugins(release)
    plugins = as_dict(profile.get("plugins"))
    points = (*extension_points(release), "multiPoint")
    for point, plugin_set in plugins.items():
        if point not in points:
            continue  # unknown extension points are decoding errors (schema, rules.fields)
        findings += _check_enabled_list(plugin_set, path_join(path, "plugins", point), point, release, table)
        for j, name in enumerate(plugin_names(plugin_set, "disabled")):
            hint = removal_hint(name, release) if name not in table else None
            if hint:
                findings.append(
                    warning(
                        path_join(path, "plugins", point, "disabled", j),
                        f"plugin {json.dumps(name)} does not exist in Kubernetes {release.name} ({hint}); "
                        "disabling it has no effect",
                        "plugins.removed-disabled",
                        name,
                    )
                )
    findings += _check_plugin_configs_enabled(profile, path, release)
    findings += _check_queue_sort_and_bind(profile, path, release)
    findings += _check_score_dominance(profile, path, release)
    findings += _unreleased_plugins(profile, path, release)
    return findings


def _where(name: str, release: Release) -> str:
    """Who registers ``name``: the reading scheduler's own release, else Kubernetes'."""
    scheduler = schedulers.scheduler_of(release)
    if name in scheduler.plugins:
        return scheduler.label
    if scheduler.release is None:
        return f"Kubernetes {release.name}"
    return schedulers.reader_label(release)


def _unreleased_plugins(profile: dict[str, Any], path: str, release: Release) -> list[Finding]:
    """A note for each plugin judged as the change that adds it has it, not as released builds do."""
    unreleased = schedulers.scheduler_of(release).unreleased
    return [
        info(path_join(path, "plugins"), why, "plugins.unreleased", name)
        for name, why in unreleased.items()
        if name in enabled_plugins(profile, release)
    ]


def _check_enabled_list(
    plugin_set: Any, point_path: str, point: str, release: Release, table: dict[str, frozenset[str] | None]
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
                    f"{_where(name, release)} (it implements {', '.join(p for p in POINTS if p in points)})"
                    + schedulers.elsewhere(
                        release, lambda b, n=name, p=point: p in b.plugins.get(n, ()), f"it at {point}"
                    )
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
            findings += _unknown_plugin(name, item, point, release, table)
        if "weight" in as_dict(plugin) and point not in (*WEIGHTED_POINTS, "multiPoint"):
            findings.append(
                warning(
                    path_join(item, "weight"),
                    f"weight is only used at the {' and '.join(_weighted(release))} extension "
                    f"point(s); ignored at {point}",
                    "plugins.weight-outside-score",
                    as_dict(plugin).get("weight"),
                )
            )
    return findings


def _weighted(release: Release) -> list[str]:
    return [p for p in extension_points(release) if p in WEIGHTED_POINTS]


def _unknown_plugin(
    name: str, item: str, point: str, release: Release, table: dict[str, frozenset[str] | None]
) -> list[Finding]:
    hint = removal_hint(name, release)
    if hint:
        if point != "multiPoint" and invalid_in_v1(name, release):
            return []  # validation.go already reports it (rules.config)
        return [
            invalid(
                item, name, f"plugin does not exist in Kubernetes {release.name}: {hint}", "plugins.removed"
            )
        ]
    since = added_in(name)
    if since is not None and release.minor < since:
        return [
            invalid(
                item,
                name,
                f"plugin {json.dumps(name)} is registered from Kubernetes 1.{since}; "
                f"{schedulers.reader_label(release)} does not have it and refuses to start",
                "plugins.unknown",
            )
        ]
    close = near_miss(name, sorted(table))
    if close is not None:
        return [
            invalid(
                item,
                name,
                f"not a plugin of Kubernetes {release.name}; did you mean {json.dumps(close)}?",
                "plugins.unknown",
            )
        ]
    scheduler = schedulers.scheduler_of(release)
    if scheduler.release is not None:
        return [
            invalid(
                item,
                name,
                f"{scheduler.label} does not register this plugin (nor does Kubernetes {release.name}): "
                "it refuses to start" + schedulers.elsewhere(release, lambda b: name in b.plugins, "it"),
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
    owners = schedulers.owners(name)
    hint = (
        f"; {' and '.join(owners)} register{'s' if len(owners) == 1 else ''} it: name the scheduler with --scheduler"
        if owners
        else " (out-of-tree schedulers are)"
    )
    return [
        warning(
            item,
            f"plugin {json.dumps(name)} is not an in-tree plugin of Kubernetes {release.name}: kube-scheduler "
            f"refuses to start unless it is built with this plugin{hint}",
            "plugins.out-of-tree",
            name,
        )
    ]


def _check_plugin_configs_enabled(profile: dict[str, Any], path: str, release: Release) -> list[Finding]:
    enabled = enabled_plugins(profile, release)
    findings: list[Finding] = []
    for j, entry in enumerate(as_list(profile.get("pluginConfig"))):
        name = as_dict(entry).get("name")
        if isinstance(name, str) and name not in enabled and not invalid_in_v1(name, release):
            findings.append(
                warning(
                    path_join(path, "pluginConfig", j),
                    f"args are given for plugin {json.dumps(name)} but this profile does not enable it",
                    "plugin-config.not-enabled",
                    name,
                )
            )
    return findings


def _check_queue_sort_and_bind(profile: dict[str, Any], path: str, release: Release) -> list[Finding]:
    findings: list[Finding] = []
    plugins = as_dict(profile.get("plugins"))
    queue_sort = effective_point(profile, "queueSort", release)
    queue_path = path_join(path, "plugins", "queueSort")
    if len(queue_sort) > 1:
        detail = "only one queue sort plugin can be enabled"
        if "PrioritySort" in queue_sort and "PrioritySort" not in plugin_names(
            plugins.get("queueSort"), "enabled"
        ):
            detail += ' (PrioritySort is enabled by default: add disabled: [{name: "*"}] to queueSort)'
        findings.append(invalid(queue_path, queue_sort, detail, "queue-sort.exactly-one"))
    elif not queue_sort:
        findings.append(
            invalid(
                queue_path,
                [],
                "no queue sort plugin is enabled; kube-scheduler needs exactly one",
                "queue-sort.exactly-one",
            )
        )
    table = schedulers.registered_plugins(release)
    user_multi = [n for n in plugin_names(plugins.get("multiPoint"), "enabled") if n not in table]
    if not user_multi and not effective_point(profile, "bind", release):
        findings.append(
            invalid(
                path_join(path, "plugins", "bind"),
                [],
                "no bind plugin is enabled; kube-scheduler needs at least one (DefaultBinder)",
                "bind.at-least-one",
            )
        )
    return findings


def _explicit_queue_sort(profile: dict[str, Any]) -> tuple[list[tuple[Any, int]], list[Any]]:
    """The profile's own queueSort set, as validation.go compares it (omitted weight is 0; nil == [])."""
    queue_sort = as_dict(as_dict(profile.get("plugins")).get("queueSort"))
    enabled = [
        (as_dict(p).get("name"), as_int(as_dict(p).get("weight")) or 0)
        for p in as_list(queue_sort.get("enabled"))
    ]
    return enabled, [as_dict(p).get("name") for p in as_list(queue_sort.get("disabled"))]


def check_common_queue_sort(profiles: list[dict[str, Any]], release: Release) -> list[Finding]:
    """The same queue sort in every profile: validateCommonQueueSort compares each profile's own queueSort
    set and the queue sort plugin's args; the framework then needs the same effective plugin."""
    if len(profiles) < 2:
        return []
    findings: list[Finding] = []
    canon_set = _explicit_queue_sort(profiles[0])
    canon = effective_point(profiles[0], "queueSort", release)
    canon_name = canon[0] if canon else None
    canon_args = _plugin_args(profiles[0], canon_name)
    for i in range(1, len(profiles)):
        current = effective_point(profiles[i], "queueSort", release)
        path = path_join("profiles", i, "plugins", "queueSort")
        if _explicit_queue_sort(profiles[i]) != canon_set:
            findings.append(
                invalid(
                    path,
                    as_dict(as_dict(profiles[i].get("plugins")).get("queueSort")),
                    "must be the same for all profiles (validation compares the queueSort lists as written, "
                    f"profiles[0] has {format_value(as_dict(as_dict(profiles[0].get('plugins')).get('queueSort')))})",
                    "queue-sort.same-in-all-profiles",
                )
            )
            continue
        if current != canon:
            findings.append(
                invalid(
                    path,
                    current,
                    f"must be the same for all profiles (profiles[0] uses {format_value(canon)})",
                    "queue-sort.same-in-all-profiles",
                )
            )
            continue
        if canon_name is not None and _plugin_args(profiles[i], canon_name) != canon_args:
            where = _plugin_config_index(profiles[i], canon_name)
            args_path = (
                path_join("profiles", i, "pluginConfig", where, "args")
                if where is not None
                else path_join("profiles", i, "pluginConfig")
            )
            findings.append(
                invalid(
                    args_path,
                    _plugin_args(profiles[i], canon_name),
                    f"args of queue sort plugin {json.dumps(canon_name)} must be the same for all profiles",
                    "queue-sort.same-in-all-profiles",
                )
            )
    return findings


def _plugin_config_index(profile: dict[str, Any], name: str | None) -> int | None:
    for j, entry in enumerate(as_list(profile.get("pluginConfig"))):
        if as_dict(entry).get("name") == name:
            return j
    return None


def _plugin_args(profile: dict[str, Any], name: str | None) -> Any:
    index = _plugin_config_index(profile, name)
    return None if index is None else as_dict(profile["pluginConfig"][index]).get("args")


def _check_score_dominance(profile: dict[str, Any], path: str, release: Release) -> list[Finding]:
    """Warn when one score plugin outweighs all the others together: it then decides placement alone."""
    weights = effective_score_weights(profile, release)
    if len(weights) < 2:
        return []
    heaviest = max(weights, key=lambda n: weights[n])
    others = sum(w for n, w in weights.items() if n != heaviest)
    if weights[heaviest] <= others or heaviest in schedulers.scheduler_of(release).dominant_by_design:
        return []  # e.g. koord-scheduler's Reservation: a node holding the pod's reservation must win
    score_path = path_join(path, "plugins", "score")
    for j, plugin in enumerate(as_list(as_dict(as_dict(profile.get("plugins")).get("score")).get("enabled"))):
        if as_dict(plugin).get("name") == heaviest:
            score_path = path_join(score_path, "enabled", j, "weight")
            break
    detail = (
        f"score plugin {json.dumps(heaviest)} has weight {weights[heaviest]}, more than all other score "
        f"plugins together ({others}: {', '.join(sorted(n for n in weights if n != heaviest))}); it "
        "alone decides the ranking whenever its scores differ"
    )
    return [warning(score_path, detail, "score.dominant-weight", weights[heaviest])]
