"""Configuration-level rules of kube-scheduler's validation.go, run on the defaulted configuration.

Structure (types, ranges, unknown fields) is the schema's job; this module holds what a schema cannot say:
cross-field rules, uniqueness, and the rules that depend on the Kubernetes release. Profiles' plugin sets
are checked in ``framework`` (what the framework refuses at start-up).
"""

from __future__ import annotations

from typing import Any

from limitguard.core.names import is_qualified_name, is_valid_resource_name
from limitguard.core.paths import path_join

from ..fields.durations import parse_go_duration
from ..fields.findings import Finding, duplicate, invalid, required
from ..fields.values import as_dict, as_int, as_list
from ..tables.api import GROUP
from ..tables.plugin_tables import invalid_in_v1
from ..tables.readers import Reader
from .unknown_fields import check_release_fields


def check_config(config: dict[str, Any], reader: Reader) -> list[Finding]:
    """All config-level rules (``config`` is the defaulted copy; paths are those of the input)."""
    findings = check_release_fields(config, reader)
    findings += _check_backoff(config)
    findings += _check_leader_election(as_dict(config.get("leaderElection")))
    # clientConnection.burst >= 0 (ValidateClientConnectionConfiguration) is a schema range
    profiles = [p if isinstance(p, dict) else {} for p in as_list(config.get("profiles"))]
    findings += _check_profile_names(profiles)
    for i, profile in enumerate(profiles):
        findings += _check_plugin_config_names(profile, path_join("profiles", i), reader)
    findings += check_extenders(as_list(config.get("extenders")))
    return findings


def _check_backoff(config: dict[str, Any]) -> list[Finding]:
    initial = as_int(config.get("podInitialBackoffSeconds"))
    maximum = as_int(config.get("podMaxBackoffSeconds"))
    if initial is not None and maximum is not None and initial > 0 and maximum < initial:
        detail = f"must be greater than or equal to podInitialBackoffSeconds ({initial})"
        if maximum == 10:
            detail += "; podMaxBackoffSeconds defaults to 10 when omitted"
        return [invalid("podMaxBackoffSeconds", maximum, detail, "backoff.max-at-least-initial")]
    return []


def _check_leader_election(election: dict[str, Any]) -> list[Finding]:
    """componentbase's ValidateLeaderElectionConfiguration (only when leaderElect) plus "leases only"."""
    if election.get("leaderElect") is False:
        return []
    findings: list[Finding] = []
    seconds: dict[str, float] = {}
    for name in ("leaseDuration", "renewDeadline", "retryPeriod"):
        value = parse_go_duration(election.get(name))
        if value is None:
            continue  # the schema reports a malformed duration
        seconds[name] = value
        if value <= 0:
            findings.append(
                invalid(
                    path_join("leaderElection", name),
                    election.get(name),
                    "must be greater than zero",
                    "leader-election.positive-duration",
                )
            )
    lease, renew = seconds.get("leaseDuration"), seconds.get("renewDeadline")
    if lease is not None and renew is not None and 0 < lease <= renew:
        findings.append(
            invalid(
                "leaderElection.leaseDuration",
                election.get("leaseDuration"),
                f"must be greater than renewDeadline ({election.get('renewDeadline')})",
                "leader-election.lease-after-renew",
            )
        )
    lock = election.get("resourceLock")
    if isinstance(lock, str) and lock != "leases":
        findings.append(
            invalid(
                "leaderElection.resourceLock",
                lock,
                'resourceLock value must be "leases"',
                "leader-election.leases",
            )
        )
    return findings


def _check_profile_names(profiles: list[dict[str, Any]]) -> list[Finding]:
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for i, profile in enumerate(profiles):
        path = path_join("profiles", i, "schedulerName")
        name = profile.get("schedulerName")
        if name is None:
            findings.append(
                required(
                    path,
                    "every profile needs a schedulerName when there is more than one profile "
                    "(default-scheduler is only implied for a single profile)",
                    "profiles.scheduler-name-required",
                )
            )
            continue
        if not isinstance(name, str):
            continue
        if name == "":
            findings.append(required(path, "must not be empty", "profiles.scheduler-name-required"))
            continue
        if name in seen:
            findings.append(
                duplicate(
                    path,
                    name,
                    "profiles.unique-scheduler-name",
                    f"already used by {path_join('profiles', seen[name], 'schedulerName')}",
                )
            )
        else:
            seen[name] = i
    return findings


def _check_plugin_config_names(profile: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    """validatePluginConfig: no duplicate names; names invalid in v1 (enabled lists and pluginConfig)."""
    findings: list[Finding] = []
    for point, plugin_set in as_dict(profile.get("plugins")).items():
        if point == "multiPoint":
            continue  # validation.go does not look at multiPoint; the framework does
        for j, plugin in enumerate(as_list(as_dict(plugin_set).get("enabled"))):
            name = as_dict(plugin).get("name")
            if isinstance(name, str) and invalid_in_v1(name, reader.release):
                findings.append(_invalid_plugin(path_join(path, "plugins", point, "enabled", j), name))
    seen: dict[str, int] = {}
    for j, entry in enumerate(as_list(profile.get("pluginConfig"))):
        name = as_dict(entry).get("name")
        if not isinstance(name, str):
            continue
        entry_path = path_join(path, "pluginConfig", j)
        if name in seen:
            findings.append(
                duplicate(
                    entry_path,
                    name,
                    "plugin-config.unique-name",
                    f"already configured by {path_join(path, 'pluginConfig', seen[name])}",
                )
            )
        else:
            seen[name] = j
        if invalid_in_v1(name, reader.release):
            findings.append(_invalid_plugin(path_join(entry_path, "name"), name))
    return findings


def _invalid_plugin(path: str, name: str) -> Finding:
    return invalid(
        path,
        name,
        f'was invalid in version "{GROUP}/v1" (KubeSchedulerConfiguration is version "{GROUP}/v1"); '
        "use NodeVolumeLimits (CSI drivers report their limits)",
        "plugins.removed",
    )


def is_extended_resource_name(name: object) -> bool:
    """Extended resource (what extenders may manage): prefixed, outside kubernetes.io, and still a
    qualified name when prefixed with ``requests.`` (quota syntax)."""
    if not isinstance(name, str) or "/" not in name or not is_valid_resource_name(name):
        return False
    if name.startswith("kubernetes.io/") or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def check_extenders(extenders: list[Any]) -> list[Finding]:
    """validateExtenders: prioritize needs a weight, one binder, valid and unique managed resources."""
    findings: list[Finding] = []
    binders: list[int] = []
    managed: dict[str, str] = {}
    for i, extender in enumerate(extenders):
        extender = as_dict(extender)
        path = path_join("extenders", i)
        weight = as_int(extender.get("weight")) or 0
        if extender.get("prioritizeVerb") and weight <= 0:
            findings.append(
                invalid(
                    path_join(path, "weight"),
                    extender.get("weight", 0),
                    "must have a positive weight applied to it (prioritizeVerb is set)",
                    "extenders.prioritize-weight",
                )
            )
        if extender.get("bindVerb"):
            binders.append(i)
        for j, resource in enumerate(as_list(extender.get("managedResources"))):
            name = as_dict(resource).get("name")
            if not isinstance(name, str):
                continue
            name_path = path_join(path, "managedResources", j, "name")
            if not is_extended_resource_name(name):
                findings.append(
                    invalid(
                        name_path,
                        name,
                        "is an invalid extended resource name (must be domain-prefixed and outside kubernetes.io/)",
                        "extenders.managed-resource-name",
                    )
                )
            if name in managed:
                findings.append(
                    invalid(
                        name_path,
                        name,
                        f"duplicate extender managed resource name (also {managed[name]})",
                        "extenders.managed-resource-unique",
                    )
                )
            else:
                managed[name] = name_path
    if len(binders) > 1:
        findings.append(
            invalid(
                "extenders",
                f"found {len(binders)} extenders implementing bind",
                "only one extender can implement bind (extenders "
                + ", ".join(str(i) for i in binders)
                + " set bindVerb)",
                "extenders.one-binder",
            )
        )
    return findings


__all__ = ["check_config", "check_extenders", "is_extended_resource_name"]
