"""Dispatch of ``pluginConfig[].args`` to their kind: schema, then defaulting, then the kind's rules.

Args of plugins limitguard does not know get an informational note, never an error: we cannot judge
them, and kube-scheduler passes them to the plugin untouched.

Out-of-tree plugins validate their args only when the framework constructs them (scheduler-plugins
v0.34.7: each plugin's New, e.g. pkg/networkaware/networkoverhead/networkoverhead.go; Koordinator v1.8.0:
pkg/scheduler/plugins/*/plugin.go New calls validation.Validate...Args). The strict decode of every
pluginConfig entry happens at config load (kube-scheduler's scheme, into which both register their
kinds), so under those schedulers the args of a plugin the profile does not enable keep their decode
(schema) errors, while their rule errors become one warning: unused now, refused once enabled.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from limitguard.core.paths import path_join

from .. import schemas
from ..args import fitplus
from ..args.kind import ArgsKind
from ..args.registry import Registry, registry_for
from ..fields.findings import Finding, forbidden, info, unsupported, warning
from ..tables.api import GROUP
from ..tables.readers import DEFAULT_READER, Reader
from .effective import effective_point, enabled_plugins


def check_plugin_configs(config: dict[str, Any], version: str, reader: Reader) -> list[Finding]:
    """Findings for the args of every pluginConfig entry of every profile."""
    findings: list[Finding] = []
    profiles = config.get("profiles")
    if not isinstance(profiles, list):
        return findings
    for i, profile in enumerate(profiles):
        entries = profile.get("pluginConfig") if isinstance(profile, dict) else None
        if not isinstance(entries, list):
            continue
        enabled = _constructed(profile, reader)
        if enabled is not None:
            configured = {e.get("name") for e in entries if isinstance(e, dict)}
            findings += _default_args(sorted(enabled - configured), path_join("profiles", i), reader)
        for j, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            findings += check_plugin_args(
                entry["name"],
                entry.get("args"),
                path_join("profiles", i, "pluginConfig", j, "args"),
                version,
                reader,
                enabled=enabled is None or entry["name"] in enabled,
            )
            if enabled is not None and entry["name"] == _NRT and _NRT in enabled:
                findings += _nrt_cache_without_reserve(profile, entry.get("args"), i, j, reader)
    return findings


def _default_args(plugins: list[str], path: str, reader: Reader) -> list[Finding]:
    """Enabled out-of-tree plugins without a pluginConfig entry: setDefaults_KubeSchedulerProfile
    (kubernetes pkg/scheduler/apis/config/v1/defaults.go) appends the defaulted ``<Name>Args`` of every
    enabled plugin whose kind GetPluginArgConversionScheme knows, and both projects register their kinds
    into kube-scheduler's v1 SchemeBuilder (scheduler-plugins v0.34.7 apis/config/v1/register.go,
    Koordinator v1.8.0 pkg/scheduler/apis/config/v1/register.go); the plugin's New validates them."""
    registry = registry_for(reader.scheduler)
    findings: list[Finding] = []
    for plugin in plugins:
        entry = registry.kinds.get(plugin + "Args")
        if entry is None or entry.in_tree or entry.plugin != plugin or not entry.exists_in(reader.release):
            continue
        defaulted: dict[str, Any] = {}
        rules = entry.default(defaulted, "args", reader) + entry.validate(defaulted, "args", reader)
        label = reader.label
        findings += [
            Finding(
                "error",
                path_join(path, "pluginConfig"),
                f"plugin {json.dumps(plugin)} is enabled without a pluginConfig entry, so {label} gives it "
                f"the default {entry.kind}, which the plugin refuses when it is constructed: {f}",
                "args.default-args",
                plugin,
            )
            for f in rules
            if f.severity == "error"
        ]
    return findings


_NRT = "NodeResourceTopologyMatch"


def _nrt_cache_without_reserve(
    profile: dict[str, Any], args: Any, i: int, j: int, reader: Reader
) -> list[Finding]:
    """scheduler-plugins v0.34.7 pkg/noderesourcetopology/README.md ("Scheduler-side cache with the
    reserve plugin"): the resync cache needs both cacheResyncPeriodSeconds > 0 and the plugin at
    reserve. New does not check it; without Reserve the OverReserve cache (cache/overreserve.go) never
    records the pods in flight, so Filter and Score judge NRT data that lacks them."""
    if not isinstance(args, dict) or args.get("discardReservedNodes") is True:
        return []
    period = args.get("cacheResyncPeriodSeconds")
    if not isinstance(period, int) or isinstance(period, bool) or period <= 0:
        return []
    if _NRT in effective_point(profile, "reserve", reader):
        return []
    return [
        warning(
            path_join("profiles", i, "pluginConfig", j, "args", "cacheResyncPeriodSeconds"),
            f"the resync cache needs {_NRT} enabled at reserve too (it is not in this profile's "
            "reserve plugins): without Reserve the cache never counts the pods being bound, so Filter "
            "and Score see node topology without them and may overcommit NUMA zones",
            "sigs.topologymatch.cache-needs-reserve",
            period,
        )
    ]


def _constructed(profile: dict[str, Any], reader: Reader) -> set[str] | None:
    """Plugins the framework constructs for ``profile`` (None: the reader validates args at load)."""
    if reader.scheduler.build is None:
        return None
    return enabled_plugins(profile, reader)


def _unknown(plugin: str, args: dict[str, Any], path: str, why: str, registry: Registry) -> list[Finding]:
    findings = [
        info(
            path,
            f"plugin {json.dumps(plugin)} {why}: its args are passed through unchecked",
            "args.unknown-plugin",
            plugin,
        )
    ]
    kind = args.get("kind")
    known = registry.kinds
    if isinstance(kind, str) and kind in known and known[kind].plugin != plugin:
        findings.append(
            warning(
                path_join(path, "kind"),
                f"{kind} are the args of plugin {json.dumps(known[kind].plugin)}, but they "
                f"are given for plugin {json.dumps(plugin)}",
                "args.kind-matches-plugin",
                kind,
            )
        )
    return findings


def _unused(plugin: str, path: str, rules: list[Finding], reader: Reader) -> list[Finding]:
    """Rule findings of args the reader never validates: errors folded into one warning."""
    errors = [f for f in rules if f.severity == "error"]
    if not errors:
        return rules
    label = reader.label
    return [
        warning(
            path,
            f"plugin {json.dumps(plugin)} is not enabled in this profile, so {label} never constructs it "
            f"and these args are unused; they would fail once it is enabled ({len(errors)} error"
            f"{'s' if len(errors) > 1 else ''}, the first: {errors[0]})",
            "args.unused-plugin",
            plugin,
        ),
        *(f for f in rules if f.severity != "error"),
    ]


def _ignored(
    plugin: str, args: dict[str, Any], path: str, reader: Reader, registry: Registry
) -> list[Finding]:
    """Args of the reader's own plugin that has no args kind: PluginConfig.decodeNestedObjects
    (kube-scheduler config/v1/types.go, v0.34.7) skips a plugin whose ``<Name>Args`` is not registered,
    the args reach New as runtime.Unknown and these plugins' New ignore them (scheduler-plugins v0.34.7
    pkg/capacityscheduling/capacity_scheduling.go, pkg/podstate/pod_state.go, pkg/qos/queue_sort.go;
    Koordinator v1.8.0 pkg/scheduler/plugins/defaultprebind/plugin.go, v1.7.0 schedulinghint New): the
    scheduler starts. A later build that has the kind is named."""
    label = reader.label
    findings = _unknown(plugin, args, path, "has no args kind", registry)
    kinds = reader.elsewhere(
        lambda build: any(entry.plugin == plugin for entry in build.kinds), "an args kind for it"
    )
    findings[0] = warning(
        path,
        f"plugin {json.dumps(plugin)} takes no args: {label} does not decode them and the plugin "
        f"ignores them (no field here has any effect){kinds}",
        "args.ignored",
        plugin,
    )
    return findings


def _newer_field(path: str, kind: str, name: str, since: str, reader: Reader) -> Finding:
    """A field a later build of the reader's project added: its strict decoder refuses it."""
    scheduler = reader.scheduler
    first = scheduler.first_with(lambda build: name in build.fields_added.get(kind, {}))
    exists = "" if first is None or first.version == since else f": it exists from {since} on"
    newer = reader.elsewhere(lambda build: build is first, "it")
    return forbidden(
        path_join(path, name),
        f"unknown field {json.dumps(name)} ({scheduler.label} does not have it{exists}{newer})",
        "schema.unknown-field",
    )


def check_kind(
    entry: ArgsKind, args: dict[str, Any], path: str, reader: Reader
) -> tuple[list[Finding], list[Finding], dict[str, Any]]:
    """One args kind as the reader runs it: its decode findings (schema; fields only a later build of
    its project has), its rule findings (defaulting, then validation) and the defaulted copy."""
    missing = reader.scheduler.missing_fields.get(entry.kind, {})
    decoded = [
        _newer_field(path, entry.kind, name, since, reader) for name, since in missing.items() if name in args
    ]
    args = {k: v for k, v in args.items() if k not in missing}
    decoded += schemas.validate(schemas.schema_validator(entry.schema_path), args, path)
    defaulted = copy.deepcopy(args)
    rules = entry.default(defaulted, path, reader)
    for name in missing:  # defaulting of a later build's field: not this build's
        defaulted.pop(name, None)
    rules += entry.validate(defaulted, path, reader)
    return decoded, rules, defaulted


def check_plugin_args(
    plugin: str,
    args: Any,
    path: str,
    version: str,
    reader: Reader = DEFAULT_READER,
    *,
    enabled: bool = True,
) -> list[Finding]:
    """Validate one plugin's args; ``path`` is the path of the ``args`` field itself. ``enabled=False``:
    the profile does not construct the plugin (only out-of-tree readers tell that apart)."""
    if not isinstance(args, dict):
        return []  # absent/null args are fine; a wrong type is a schema error of the config
    registry = registry_for(reader.scheduler)
    kinds = [k for k in registry.plugin_kinds.get(plugin, ()) if registry.kinds[k].exists_in(reader.release)]
    if not kinds and plugin in reader.scheduler.plugins:
        return _ignored(plugin, args, path, reader, registry)
    if not kinds:
        why = (
            f"has no args kind in Kubernetes {reader.release.name}"
            if plugin in registry.plugin_kinds
            else "is not known to limitguard"
        )
        return _unknown(plugin, args, path, why, registry)
    findings: list[Finding] = []
    kind = args.get("kind")
    checked = args
    if kind is not None and kind not in kinds:
        findings.append(unsupported(path_join(path, "kind"), kind, kinds, "args.kind-matches-plugin"))
        checked = {k: v for k, v in args.items() if k != "kind"}
    entry = registry.kinds[kind if kind in kinds else kinds[0]]
    api_version = args.get("apiVersion")
    expected = f"{GROUP}/{version}"
    if isinstance(api_version, str) and api_version != expected and api_version.startswith(GROUP + "/"):
        findings.append(
            warning(
                path_join(path, "apiVersion"),
                f"args apiVersion {json.dumps(api_version)} differs from the configuration's "
                f"{json.dumps(expected)}",
                "args.api-version",
                api_version,
            )
        )
    decoded, rules, _ = check_kind(entry, checked, path, reader)
    findings += decoded
    if not enabled and not entry.in_tree and entry.validate is not fitplus.koord_refuses_legacy_kind:
        rules = _unused(plugin, path, rules, reader)
    return findings + rules
