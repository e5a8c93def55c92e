"""What the framework runs at each extension point: default and profile plugin sets merged.

The framework (pkg/scheduler/framework/runtime/framework.go) merges the multiPoint defaults of
default_plugins.go with the profile (mergePluginSet: a re-configured default keeps its place), then
expands multiPoint to every extension point each plugin implements; a point's own list comes first.
The plugins are those the reading scheduler registers (``schedulers``): kube-scheduler's and its own.
"""

from __future__ import annotations

from typing import Any

from ..fields.values import as_dict, as_int, as_list
from ..tables.plugin_tables import OUT_OF_TREE_QUEUE_SORT, default_plugins
from ..tables.readers import Reader


def plugin_names(plugin_set: Any, key: str) -> list[str]:
    return [
        p["name"]
        for p in as_list(as_dict(plugin_set).get(key))
        if isinstance(p, dict) and isinstance(p.get("name"), str)
    ]


def merged_multipoint(profile: dict[str, Any], reader: Reader) -> list[dict[str, Any]]:
    """mergePluginSet(defaults, profile's multiPoint): re-configured defaults keep their place."""
    custom = as_dict(as_dict(profile.get("plugins")).get("multiPoint"))
    disabled = set(plugin_names(custom, "disabled"))
    enabled = [
        p for p in as_list(custom.get("enabled")) if isinstance(p, dict) and isinstance(p.get("name"), str)
    ]
    by_name = {p["name"]: i for i, p in enumerate(enabled)}
    result: list[dict[str, Any]] = []
    replaced: set[int] = set()
    if "*" not in disabled:
        for plugin in default_plugins(reader.release):
            if plugin["name"] in disabled:
                continue
            index = by_name.get(str(plugin["name"]))
            if index is not None:
                replaced.add(index)
                plugin = enabled[index]
            result.append(plugin)
    result += [p for i, p in enumerate(enabled) if i not in replaced]
    return result


def _implements(name: str, point: str, table: dict[str, frozenset[str] | None], reader: Reader) -> bool:
    if name in table:
        points = table[name]
        return points is not None and point in points
    # kube-scheduler's view of a build it cannot see: the out-of-tree queue sorts known to exist
    return point == "queueSort" and name in OUT_OF_TREE_QUEUE_SORT and reader.scheduler.build is None


def effective_point(profile: dict[str, Any], point: str, reader: Reader) -> list[str]:
    """Plugins the framework runs at ``point``: the point's own list, then multiPoint's that fit."""
    point_set = as_dict(as_dict(profile.get("plugins")).get(point))
    result = list(dict.fromkeys(plugin_names(point_set, "enabled")))
    disabled = set(plugin_names(point_set, "disabled"))
    if "*" in disabled:
        return result
    table = reader.registered_plugins()
    for plugin in merged_multipoint(profile, reader):
        name = plugin["name"]
        if name not in disabled and name not in result and _implements(name, point, table, reader):
            result.append(name)
    return result


def enabled_plugins(profile: dict[str, Any], reader: Reader) -> set[str]:
    """Every plugin the profile enables anywhere (its lists plus the defaults it keeps)."""
    plugins = as_dict(profile.get("plugins"))
    names = {
        n
        for point, plugin_set in plugins.items()
        if point != "multiPoint"
        for n in plugin_names(plugin_set, "enabled")
    }
    return names | {p["name"] for p in merged_multipoint(profile, reader)}


def effective_score_weights(profile: dict[str, Any], reader: Reader) -> dict[str, int]:
    """Score plugin -> weight as the framework uses it (an explicit score weight wins; 0 means 1)."""
    weights: dict[str, int] = {}
    for plugin in merged_multipoint(profile, reader):
        weights[plugin["name"]] = as_int(plugin.get("weight")) or 1
    for plugin in as_list(as_dict(as_dict(profile.get("plugins")).get("score")).get("enabled")):
        if isinstance(plugin, dict) and isinstance(plugin.get("name"), str):
            weights[plugin["name"]] = as_int(plugin.get("weight")) or 1
    return {n: weights.get(n, 1) for n in effective_point(profile, "score", reader)}
