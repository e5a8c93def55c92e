"""ElasticQuotaArgs (Koordinator v1.8.0: apis/config/v1 SetDefaults_ElasticQuotaArgs,
apis/config/validation ValidateElasticQuotaArgs and the hook-plugin set-up of plugins/elasticquota New).

ValidateElasticQuotaArgs returns at its first problem; limitguard names each, which changes no verdict.
Hook plugins are built from factories registered in Go code: the koord-scheduler v1.8.0 binary registers
none (core.RegisterHookPluginFactory is only called by tests), so any hookPlugins entry stops the start.
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...fields.values import as_dict, as_list
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, drop_nulls, duration_seconds, koord_scheduler, negative_quantities

#: math.MaxInt64 / 5, the defaults' "no limit" for cpu and memory.
NO_LIMIT = 1844674407370955161
DEFAULTS: dict[str, Any] = {
    "delayEvictTime": "2m0s",
    "revokePodInterval": "1s",
    "quotaGroupNamespace": "koordinator-system",
    "monitorAllQuotas": False,
    "enableCheckParentQuota": False,
    "enableRuntimeQuota": True,
    "enableMinQuotaScale": True,
    "disableDefaultQuotaPreemption": True,
    "enableQueueHint": False,
    "quotaSnapshotUpdateInterval": "2m0s",
}
DURATION_MESSAGES = {
    "delayEvictTime": "elasticQuotaArgs error, DelayEvictTime should be a positive value",
    "revokePodInterval": "elasticQuotaArgs error, RevokePodCycle should be a positive value",
}


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    for name in ("defaultQuotaGroupMax", "systemQuotaGroupMax"):
        if not args.get(name):
            args[name] = {"cpu": str(NO_LIMIT), "memory": str(NO_LIMIT)}
    if args.get("quotaGroupNamespace", "") == "":
        args["quotaGroupNamespace"] = DEFAULTS["quotaGroupNamespace"]
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    for name in ("defaultQuotaGroupMax", "systemQuotaGroupMax"):
        findings += negative_quantities(
            args.get(name),
            path_join(path, name),
            f"elasticQuotaArgs error, {name} should be a positive value, resourceName:{{name}}",
            "koord.elasticquota.negative-max",
        )
    for name, message in DURATION_MESSAGES.items():
        seconds = duration_seconds(args.get(name))
        if seconds is not None and seconds < 0:
            findings.append(
                invalid(path_join(path, name), args[name], message, "koord.elasticquota.duration")
            )
    findings += _hook_plugins(args.get("hookPlugins"), path_join(path, "hookPlugins"), reader)
    findings += _busy_loops(args, path)
    return findings


def _hook_plugins(hooks: Any, path: str, reader: Reader) -> list[Finding]:
    """initHookPlugins: an empty key or factory key, or a factory the binary lacks, fails New."""
    findings = []
    for i, hook in enumerate(as_list(hooks)):
        hook = as_dict(hook)
        key, factory = hook.get("key") or "", hook.get("factoryKey") or ""
        if not key:
            problem, where = f"failed to initialize index-{i} hook plugin: key is empty", "key"
        elif not factory:
            problem, where = f"failed to initialize hook plugin {key}: factory key is empty", "factoryKey"
        else:
            problem = (
                f"failed to initialize hook plugin {key}: factory {factory} not found "
                f"({koord_scheduler(reader)} registers no hook plugin factory; only a build that adds one "
                "can use hookPlugins)"
            )
            where = "factoryKey"
        findings.append(
            invalid(path_join(path, i, where), hook.get(where, ""), problem, "koord.elasticquota.hook")
        )
    return findings


def _busy_loops(args: dict[str, Any], path: str) -> list[Finding]:
    """Intervals koord-scheduler hands to wait.Until unchecked: 0 (or less) reruns the loop back to back."""
    loops = []
    if args.get("monitorAllQuotas") is True and args.get("enableRuntimeQuota") is not False:
        loops.append(("revokePodInterval", "the over-quota revoke loop"))
    if args.get("enableQueueHint") is True:
        loops.append(("quotaSnapshotUpdateInterval", "the quota snapshot updater"))
    findings = []
    for name, loop in loops:
        seconds = duration_seconds(args.get(name))
        if seconds is not None and seconds <= 0 and not (name == "revokePodInterval" and seconds < 0):
            findings.append(
                warning(
                    path_join(path, name),
                    f"{json.dumps(args[name])}: {loop} runs again as soon as it ends, keeping a CPU busy",
                    "koord.elasticquota.zero-interval",
                    args[name],
                )
            )
    return findings


ARGS = ArgsKind("ElasticQuotaArgs", "ElasticQuota", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
