"""kube-scheduler's v1 defaulting (pkg/scheduler/apis/config/v1/defaults.go) on a copy of the config.

Validation runs on the defaulted values, as kube-scheduler's does: ``podInitialBackoffSeconds: 20``
alone is an error because podMaxBackoffSeconds defaults to 10. Where defaulting replaces a value the user
wrote (a zero duration, a zero client QPS/burst), a warning says so: kube-scheduler does it silently.
Plugin sets are merged with the defaults in ``framework``; plugin args are defaulted per kind in ``args``.
"""

from __future__ import annotations

import copy
from typing import Any

from limitguard.core.paths import path_join

from ..args.common import replaced_zero
from ..fields.durations import parse_go_duration
from ..fields.findings import Finding
from ..fields.values import as_dict, as_int, as_list

LEADER_ELECTION_DURATIONS = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}
DEFAULT_SCHEDULER_NAME = "default-scheduler"


def apply_defaults(config: dict[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    """The defaulted copy of ``config`` and warnings for explicit values defaulting replaced."""
    out = copy.deepcopy(config)
    warnings: list[Finding] = []
    out.setdefault("parallelism", 16)
    profiles = out.get("profiles")
    if profiles is None or profiles == []:
        out["profiles"] = profiles = [{}]
    single = isinstance(profiles, list) and len(profiles) == 1 and isinstance(profiles[0], dict)
    if single and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    out.setdefault("percentageOfNodesToScore", 0)
    election = out.setdefault("leaderElection", {})
    if isinstance(election, dict):
        warnings += _default_leader_election(election)
    connection = out.setdefault("clientConnection", {})
    if isinstance(connection, dict):
        connection.setdefault("contentType", "application/vnd.kubernetes.protobuf")
        for name, default in (("qps", 50.0), ("burst", 100)):
            value = connection.get(name)
            if value is None or (
                isinstance(value, int | float) and not isinstance(value, bool) and value == 0
            ):
                if value is not None:
                    warnings.append(replaced_zero(path_join("clientConnection", name), name, value, default))
                connection[name] = default
    out.setdefault("podInitialBackoffSeconds", 1)
    out.setdefault("podMaxBackoffSeconds", 10)
    out.setdefault("enableProfiling", True)
    return out, warnings


def _default_leader_election(election: dict[str, Any]) -> list[Finding]:
    warnings: list[Finding] = []
    election.setdefault("leaderElect", True)
    for name in ("resourceLock", "resourceNamespace", "resourceName"):
        if not election.get(name):
            election[name] = {"resourceLock": "leases", "resourceNamespace": "kube-system"}.get(
                name, "kube-scheduler"
            )
    for name, default in LEADER_ELECTION_DURATIONS.items():
        raw = election.get(name)
        if raw is None:
            election[name] = default
        elif parse_go_duration(raw) == 0:
            warnings.append(replaced_zero(path_join("leaderElection", name), name, raw, default))
            election[name] = default
    return warnings


def plugin_weight_warnings(profile: dict[str, Any], path: str) -> list[Finding]:
    """An explicit score weight 0 means the plugin's default weight (the framework's rule), not "off"."""
    warnings: list[Finding] = []
    plugins = as_dict(profile.get("plugins"))
    for point in ("score", "multiPoint"):
        for j, plugin in enumerate(as_list(as_dict(plugins.get(point)).get("enabled"))):
            if isinstance(plugin, dict) and "weight" in plugin and as_int(plugin["weight"]) == 0:
                warnings.append(
                    replaced_zero(path_join(path, "plugins", point, "enabled", j, "weight"), "weight", 0, 1)
                )
    return warnings
