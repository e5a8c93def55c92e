"""Queue sort and bind: what the framework needs of every profile, and validation of the profiles together.

kube-scheduler needs exactly one queue sort plugin, the same one in every profile (validation.go
validateCommonQueueSort compares each profile's own queueSort set and the plugin's args; the framework
then needs the same effective plugin), and at least one bind plugin
(pkg/scheduler/framework/runtime/framework.go).
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding, format_value, invalid
from ..fields.values import as_dict, as_int, as_list
from ..tables.readers import Reader
from .effective import effective_point, plugin_names

__all__ = ["check_common_queue_sort", "check_queue_sort_and_bind"]


def check_queue_sort_and_bind(profile: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    plugins = as_dict(profile.get("plugins"))
    queue_sort = effective_point(profile, "queueSort", reader)
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
    table = reader.registered_plugins()
    user_multi = [n for n in plugin_names(plugins.get("multiPoint"), "enabled") if n not in table]
    if not user_multi and not effective_point(profile, "bind", reader):
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


def check_common_queue_sort(profiles: list[dict[str, Any]], reader: Reader) -> list[Finding]:
    """The same queue sort in every profile: validateCommonQueueSort compares each profile's own queueSort
    set and the queue sort plugin's args; the framework then needs the same effective plugin."""
    if len(profiles) < 2:
        return []
    findings: list[Finding] = []
    canon_set = _explicit_queue_sort(profiles[0])
    canon = effective_point(profiles[0], "queueSort", reader)
    canon_name = canon[0] if canon else None
    canon_args = _plugin_args(profiles[0], canon_name)
    for i in range(1, len(profiles)):
        current = effective_point(profiles[i], "queueSort", reader)
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
