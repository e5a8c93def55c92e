"""Dispatch of ``pluginConfig[].args`` to the schema and rules of their kind.

kube-scheduler decodes the args of an in-tree plugin as ``<PluginName>Args`` and passes args of plugins it
does not know through untouched. limitguard does the same and additionally knows the out-of-tree kinds the
project cares about (koordinator's NodeResourcesFitPlus / ScarceResourceAvoidance and LimitAware). Args of
any other plugin get an informational note, never an error: we cannot judge them.
"""

from __future__ import annotations

import json
from typing import Any

from . import rules, schemas
from .report import Finding, info, path_join, unsupported, warning

GROUP = "kubescheduler.config.k8s.io"

#: Plugin name -> accepted args kinds (the first one names the schema).
PLUGIN_ARGS_KINDS: dict[str, tuple[str, ...]] = {
    "NodeResourcesFit": ("NodeResourcesFitArgs",),
    "NodeResourcesBalancedAllocation": ("NodeResourcesBalancedAllocationArgs",),
    "DefaultPreemption": ("DefaultPreemptionArgs",),
    "InterPodAffinity": ("InterPodAffinityArgs",),
    "PodTopologySpread": ("PodTopologySpreadArgs",),
    "VolumeBinding": ("VolumeBindingArgs",),
    "NodeAffinity": ("NodeAffinityArgs",),
    "NodeResourcesFitPlus": ("NodeResourcesFitPlusArgs", "ResourceTypesArgs"),
    "ScarceResourceAvoidance": ("ScarceResourceAvoidanceArgs",),
    "LimitAware": ("LimitAwareArgs",),
}

KIND_TO_PLUGIN: dict[str, str] = {
    kind: plugin for plugin, kinds in PLUGIN_ARGS_KINDS.items() for kind in kinds
}


def check_plugin_configs(config: dict[str, Any], version: str) -> list[Finding]:
    """Findings for the args of every pluginConfig entry of every profile."""
    findings: list[Finding] = []
    profiles = config.get("profiles")
    if not isinstance(profiles, list):
        return findings
    for i, profile in enumerate(profiles):
        entries = profile.get("pluginConfig") if isinstance(profile, dict) else None
        if not isinstance(entries, list):
            continue
        for j, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            findings += check_plugin_args(
                entry["name"], entry.get("args"), path_join("profiles", i, "pluginConfig", j, "args"), version
            )
    return findings


def check_plugin_args(plugin: str, args: Any, path: str, version: str) -> list[Finding]:
    """Validate one plugin's args; ``path`` is the path of the ``args`` field itself."""
    if not isinstance(args, dict):
        return []  # absent/null args are fine; a wrong type is a schema error of the config
    kind = args.get("kind")
    kinds = PLUGIN_ARGS_KINDS.get(plugin)
    if kinds is None:
        findings = [
            info(
                path,
                f"plugin {json.dumps(plugin)} is not known to limitguard: its args are passed "
                "through unchecked",
                "args.unknown-plugin",
                plugin,
            )
        ]
        if isinstance(kind, str) and kind in KIND_TO_PLUGIN:
            findings.append(
                warning(
                    path_join(path, "kind"),
                    f"{kind} are the args of plugin {json.dumps(KIND_TO_PLUGIN[kind])}, but they "
                    f"are given for plugin {json.dumps(plugin)}",
                    "args.kind-matches-plugin",
                    kind,
                )
            )
        return findings

    findings = []
    checked = args
    if kind is not None and kind not in kinds:
        findings.append(unsupported(path_join(path, "kind"), kind, kinds, "args.kind-matches-plugin"))
        checked = {k: v for k, v in args.items() if k != "kind"}
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
    findings += schemas.validate(schemas.args_validator(kinds[0]), checked, path)
    findings += rules.ARGS_RULES[kinds[0]](args, path)
    return findings
