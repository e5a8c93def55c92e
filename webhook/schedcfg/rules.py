"""Semantic rules that JSON Schema cannot express, plus the resource-name / ratio helpers.

The rules mirror kube-scheduler's own validation (pkg/scheduler/apis/config/validation), applied to the
values kube-scheduler would see *after defaulting* (e.g. podMaxBackoffSeconds defaults to 10, so
``podInitialBackoffSeconds: 20`` alone is an error), and a few checks kube-scheduler only performs when
the framework starts (one queue-sort plugin, at least one bind plugin). Every rule runs defensively on
data that may already have schema errors: a wrong type is skipped here, never a crash.

``parse_ratio_percent`` and ``is_valid_resource_name`` come from the pure core (``limitguard.core``), shared
with the node-annotation webhook (``node.koordinator.sh/limit-to-allocatable``, SPEC 2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from limitguard.core.names import (
    RESOURCE_NAME_HINT,
    is_qualified_name,
    is_valid_resource_name,
)

from .report import (
    Finding,
    duplicate,
    forbidden,
    format_value,
    invalid,
    path_join,
    required,
    warning,
)


# --------------------------------------------------------------------------- resource names and ratios
# Shared with the node-annotation webhook: one definition, in the pure core.
def is_extended_resource_name(name: object) -> bool:
    """Extended resource (what scheduler extenders may manage): prefixed, not in the kubernetes.io
    namespace, and still a qualified name when prefixed with ``requests.`` (quota syntax)."""
    if not isinstance(name, str) or "/" not in name or not is_valid_resource_name(name):
        return False
    if name.startswith("kubernetes.io/") or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


# --------------------------------------------------------------------------- plugin knowledge
VERSION_ORDER = {"v1beta2": 0, "v1beta3": 1, "v1": 2}
GROUP = "kubescheduler.config.k8s.io"

#: Plugin -> (first config version where it no longer exists, what to use instead).
REMOVED_PLUGINS: dict[str, tuple[str, str]] = {
    "NodeResourcesLeastAllocated": (
        "v1beta2",
        "use NodeResourcesFit with scoringStrategy.type LeastAllocated",
    ),
    "NodeResourcesMostAllocated": ("v1beta2", "use NodeResourcesFit with scoringStrategy.type MostAllocated"),
    "RequestedToCapacityRatio": (
        "v1beta2",
        "use NodeResourcesFit with scoringStrategy.type RequestedToCapacityRatio",
    ),
    "NodeLabel": ("v1beta3", "use NodeAffinity"),
    "ServiceAffinity": ("v1beta3", "use InterPodAffinity"),
    "NodePreferAvoidPods": ("v1beta3", "use node taints"),
    "SelectorSpread": ("v1", "use PodTopologySpread"),
    "AzureDiskLimits": ("v1", "use NodeVolumeLimits (CSI)"),
    "CinderLimits": ("v1", "use NodeVolumeLimits (CSI)"),
    "EBSLimits": ("v1", "use NodeVolumeLimits (CSI)"),
    "GCEPDLimits": ("v1", "use NodeVolumeLimits (CSI)"),
}

#: Default plugins of kube-scheduler (enabled through multiPoint from v1beta3 on).
DEFAULT_PLUGINS = frozenset(
    {
        "PrioritySort",
        "SchedulingGates",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
        "DynamicResources",
    }
)

#: Default score plugins and weights per config version (v1beta3 changed the weights).
DEFAULT_SCORE_WEIGHTS: dict[str, dict[str, int]] = {
    "v1": {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    },
    "v1beta2": {
        "TaintToleration": 1,
        "NodeAffinity": 1,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 1,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    },
}
DEFAULT_SCORE_WEIGHTS["v1beta3"] = DEFAULT_SCORE_WEIGHTS["v1"]

#: Plugins known to implement QueueSort (multiPoint registers them there too).
QUEUE_SORT_PLUGINS = frozenset({"PrioritySort", "Coscheduling", "QOSSort"})

SCORE_POINTS = frozenset({"score", "multiPoint", "placementScore"})


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _plugin_names(plugin_set: Any, key: str) -> list[str]:
    return [
        p["name"]
        for p in _as_list(_as_dict(plugin_set).get(key))
        if isinstance(p, dict) and isinstance(p.get("name"), str)
    ]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --------------------------------------------------------------------------- top-level rules
def check_config(config: dict[str, Any], version: str) -> list[Finding]:
    """All cross-field rules of one KubeSchedulerConfiguration (schema errors are reported elsewhere)."""
    findings: list[Finding] = []
    findings += _check_backoff(config)
    findings += _check_leader_election(_as_dict(config.get("leaderElection")))
    profiles = [p if isinstance(p, dict) else {} for p in _as_list(config.get("profiles"))]
    findings += _check_profile_names(profiles)
    for i, profile in enumerate(profiles):
        findings += check_profile(profile, path_join("profiles", i), version)
    findings += _check_common_queue_sort(profiles, version)
    findings += _check_extenders(_as_list(config.get("extenders")))
    return findings


def _check_backoff(config: dict[str, Any]) -> list[Finding]:
    initial = _int(config.get("podInitialBackoffSeconds"))
    maximum = _int(config.get("podMaxBackoffSeconds"))
    effective_initial = 1 if initial is None else initial
    effective_max = 10 if maximum is None else maximum
    if effective_initial > 0 and effective_max < effective_initial:
        detail = f"must be greater than or equal to podInitialBackoffSeconds ({effective_initial})"
        if maximum is None:
            detail += "; it defaults to 10 when omitted"
        return [invalid("podMaxBackoffSeconds", effective_max, detail, "backoff.max-at-least-initial")]
    return []


_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_go_duration(text: str) -> float | None:
    """Seconds of a Go duration string ("1m30s"), or None when it is not one."""
    if not isinstance(text, str):
        return None
    body, sign = text, 1.0
    if body[:1] in "+-" and body:
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    total, pos = 0.0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    return sign * total if pos == len(body) and pos > 0 else None


def _check_leader_election(election: dict[str, Any]) -> list[Finding]:
    if election.get("leaderElect") is False:
        return []
    findings: list[Finding] = []
    defaults = {"leaseDuration": 15.0, "renewDeadline": 10.0, "retryPeriod": 2.0}
    values: dict[str, float] = {}
    for name, default in defaults.items():
        raw = election.get(name)
        seconds = parse_go_duration(raw) if raw is not None else default
        if seconds is None:
            continue  # the schema reports the malformed duration
        values[name] = seconds
        if seconds <= 0:
            findings.append(
                invalid(
                    path_join("leaderElection", name),
                    raw,
                    "must be greater than zero",
                    "leader-election.positive-duration",
                )
            )
    lease, renew = values.get("leaseDuration"), values.get("renewDeadline")
    if lease is not None and renew is not None and 0 < lease <= renew:
        findings.append(
            invalid(
                "leaderElection.leaseDuration",
                election.get("leaseDuration", "15s"),
                f"must be greater than renewDeadline ({election.get('renewDeadline', '10s')})",
                "leader-election.lease-after-renew",
            )
        )
    lock = election.get("resourceLock")
    if isinstance(lock, str) and lock and lock != "leases":
        findings.append(
            invalid(
                "leaderElection.resourceLock",
                lock,
                'resourceLock value must be "leases"',
                "leader-election.leases-only",
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
            if len(profiles) > 1:
                findings.append(
                    required(
                        path,
                        "every profile needs a schedulerName when there is more than "
                        "one profile (default-scheduler is only implied for a single "
                        "profile)",
                        "profiles.scheduler-name-required",
                    )
                )
                continue
            name = "default-scheduler"
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


def _removed(plugin: str, version: str) -> tuple[str, str] | None:
    removal = REMOVED_PLUGINS.get(plugin)
    if removal and VERSION_ORDER.get(version, 2) >= VERSION_ORDER[removal[0]]:
        return removal
    return None


def check_profile(profile: dict[str, Any], path: str, version: str) -> list[Finding]:
    """Rules within one profile: removed plugins, weights, duplicate pluginConfig, queue sort, bind."""
    findings: list[Finding] = []
    plugins = _as_dict(profile.get("plugins"))
    for point, plugin_set in plugins.items():
        for list_name in ("enabled", "disabled"):
            for j, plugin in enumerate(_as_list(_as_dict(plugin_set).get(list_name))):
                if not isinstance(plugin, dict) or not isinstance(plugin.get("name"), str):
                    continue
                item_path = path_join(path, "plugins", point, list_name, j)
                findings += _check_plugin_reference(plugin, item_path, point, list_name, version)

    seen_configs: dict[str, int] = {}
    for j, entry in enumerate(_as_list(profile.get("pluginConfig"))):
        name = _as_dict(entry).get("name")
        if not isinstance(name, str):
            continue
        entry_path = path_join(path, "pluginConfig", j)
        if name in seen_configs:
            findings.append(
                duplicate(
                    path_join(entry_path, "name"),
                    name,
                    "plugin-config.unique-name",
                    f"already configured by {path_join(path, 'pluginConfig', seen_configs[name])}",
                )
            )
        else:
            seen_configs[name] = j
        removal = _removed(name, version)
        if removal:
            findings.append(
                invalid(
                    path_join(entry_path, "name"),
                    name,
                    f"was removed in {GROUP}/{removal[0]} (configuration is {GROUP}/{version}): {removal[1]}",
                    "plugins.removed",
                )
            )
        elif name not in enabled_plugins(profile, version):
            findings.append(
                warning(
                    entry_path,
                    f"args are given for plugin {json.dumps(name)} but this profile does not enable it",
                    "plugin-config.not-enabled",
                    name,
                )
            )

    queue_sort = effective_queue_sort(profile, version)
    if len(queue_sort) > 1:
        detail = "only one queue sort plugin can be enabled"
        if "PrioritySort" in queue_sort and "PrioritySort" not in _plugin_names(
            plugins.get("queueSort"), "enabled"
        ):
            detail += ' (PrioritySort is enabled by default: add disabled: [{name: "*"}] to queueSort)'
        findings.append(
            invalid(path_join(path, "plugins", "queueSort"), queue_sort, detail, "queue-sort.exactly-one")
        )
    elif not queue_sort:
        findings.append(
            invalid(
                path_join(path, "plugins", "queueSort"),
                [],
                "no queue sort plugin is enabled; kube-scheduler needs exactly one",
                "queue-sort.exactly-one",
            )
        )
    if not _has_bind_plugin(profile, version):
        findings.append(
            invalid(
                path_join(path, "plugins", "bind"),
                [],
                "no bind plugin is enabled; kube-scheduler needs at least one (DefaultBinder)",
                "bind.at-least-one",
            )
        )
    findings += _check_score_dominance(profile, path, version)
    return findings


def _check_plugin_reference(
    plugin: dict[str, Any], item_path: str, point: str, list_name: str, version: str
) -> list[Finding]:
    findings: list[Finding] = []
    name = plugin["name"]
    removal = _removed(name, version)
    if removal and list_name == "enabled":
        findings.append(
            invalid(
                item_path,
                name,
                f"was removed in {GROUP}/{removal[0]} (configuration is {GROUP}/{version}): {removal[1]}",
                "plugins.removed",
            )
        )
    elif removal:
        findings.append(
            warning(
                item_path,
                f"plugin {json.dumps(name)} no longer exists in {GROUP}/{version} "
                f"(removed in {removal[0]}); disabling it has no effect",
                "plugins.removed-disabled",
                name,
            )
        )
    if list_name == "enabled" and "weight" in plugin and point not in SCORE_POINTS:
        findings.append(
            warning(
                path_join(item_path, "weight"),
                f"weight is only used at the score extension point; ignored at {point}",
                "plugins.weight-outside-score",
                plugin.get("weight"),
            )
        )
    return findings


def enabled_plugins(profile: dict[str, Any], version: str) -> set[str]:
    """Names the profile enables: listed anywhere in ``enabled`` plus the defaults it does not disable."""
    plugins = _as_dict(profile.get("plugins"))
    names = {n for plugin_set in plugins.values() for n in _plugin_names(plugin_set, "enabled")}
    if version == "v1beta2":
        disabled = {n for plugin_set in plugins.values() for n in _plugin_names(plugin_set, "disabled")}
        names |= DEFAULT_PLUGINS - disabled
    else:
        multi_disabled = set(_plugin_names(plugins.get("multiPoint"), "disabled"))
        if "*" not in multi_disabled:
            names |= DEFAULT_PLUGINS - multi_disabled
    return names


def _effective_point(
    profile: dict[str, Any],
    version: str,
    point: str,
    defaults: Iterable[str],
    multipoint_capable: frozenset[str],
) -> list[str]:
    """Plugins active at one extension point after merging defaults, multiPoint and the point itself."""
    plugins = _as_dict(profile.get("plugins"))
    point_set = plugins.get(point)
    result = list(dict.fromkeys(_plugin_names(point_set, "enabled")))
    disabled = set(_plugin_names(point_set, "disabled"))
    if version == "v1beta2":
        if "*" not in disabled:
            result += [d for d in defaults if d not in disabled and d not in result]
        return result
    if "*" in disabled:
        return result
    multi = plugins.get("multiPoint")
    multi_disabled = set(_plugin_names(multi, "disabled"))
    candidates = [] if "*" in multi_disabled else [d for d in defaults if d not in multi_disabled]
    candidates += [n for n in _plugin_names(multi, "enabled") if n in multipoint_capable]
    result += [c for c in dict.fromkeys(candidates) if c not in disabled and c not in result]
    return result


def effective_queue_sort(profile: dict[str, Any], version: str) -> list[str]:
    """Queue-sort plugins kube-scheduler would run for this profile (should be exactly one)."""
    return _effective_point(profile, version, "queueSort", ["PrioritySort"], QUEUE_SORT_PLUGINS)


def _has_bind_plugin(profile: dict[str, Any], version: str) -> bool:
    plugins = _as_dict(profile.get("plugins"))
    # A plugin enabled through multiPoint may implement Bind; we cannot know for out-of-tree ones.
    user_multi = set(_plugin_names(plugins.get("multiPoint"), "enabled")) - DEFAULT_PLUGINS
    if user_multi:
        return True
    return bool(_effective_point(profile, version, "bind", ["DefaultBinder"], frozenset({"DefaultBinder"})))


def _check_common_queue_sort(profiles: list[dict[str, Any]], version: str) -> list[Finding]:
    if len(profiles) < 2:
        return []
    findings: list[Finding] = []
    canon = effective_queue_sort(profiles[0], version)
    canon_name = canon[0] if canon else None
    canon_args = _plugin_args(profiles[0], canon_name)
    for i in range(1, len(profiles)):
        current = effective_queue_sort(profiles[i], version)
        if current != canon:
            findings.append(
                invalid(
                    path_join("profiles", i, "plugins", "queueSort"),
                    current,
                    f"must be the same for all profiles (profiles[0] uses {format_value(canon)})",
                    "queue-sort.same-in-all-profiles",
                )
            )
            continue
        if canon_name is not None and _plugin_args(profiles[i], canon_name) != canon_args:
            where = _plugin_config_index(profiles[i], canon_name)
            path = (
                path_join("profiles", i, "pluginConfig", where, "args")
                if where is not None
                else path_join("profiles", i, "pluginConfig")
            )
            findings.append(
                invalid(
                    path,
                    _plugin_args(profiles[i], canon_name),
                    f"args of queue sort plugin {json.dumps(canon_name)} must be the same for all profiles",
                    "queue-sort.same-in-all-profiles",
                )
            )
    return findings


def _plugin_config_index(profile: dict[str, Any], name: str | None) -> int | None:
    for j, entry in enumerate(_as_list(profile.get("pluginConfig"))):
        if _as_dict(entry).get("name") == name:
            return j
    return None


def _plugin_args(profile: dict[str, Any], name: str | None) -> Any:
    index = _plugin_config_index(profile, name)
    return None if index is None else _as_dict(profile["pluginConfig"][index]).get("args")


def _check_score_dominance(profile: dict[str, Any], path: str, version: str) -> list[Finding]:
    """Warn when one score plugin outweighs all the others together: it then decides placement alone."""
    weights = effective_score_weights(profile, version)
    if len(weights) < 2:
        return []
    heaviest = max(weights, key=lambda n: weights[n])
    others = sum(w for n, w in weights.items() if n != heaviest)
    if weights[heaviest] <= others:
        return []
    score_path = path_join(path, "plugins", "score")
    for j, plugin in enumerate(
        _as_list(_as_dict(_as_dict(profile.get("plugins")).get("score")).get("enabled"))
    ):
        if _as_dict(plugin).get("name") == heaviest:
            score_path = path_join(score_path, "enabled", j, "weight")
            break
    detail = (
        f"score plugin {json.dumps(heaviest)} has weight {weights[heaviest]}, more than all other score "
        f"plugins together ({others}: {', '.join(sorted(n for n in weights if n != heaviest))}); it "
        "alone decides the ranking whenever its scores differ"
    )
    return [warning(score_path, detail, "score.dominant-weight", weights[heaviest])]


def effective_score_weights(profile: dict[str, Any], version: str) -> dict[str, int]:
    """Score plugin -> weight as kube-scheduler would use them (0 / omitted weight means 1 or the default)."""
    defaults = DEFAULT_SCORE_WEIGHTS.get(version, DEFAULT_SCORE_WEIGHTS["v1"])
    names = _effective_point(profile, version, "score", list(defaults), frozenset(defaults))
    plugins = _as_dict(profile.get("plugins"))
    explicit: dict[str, int] = {}
    for point in ("multiPoint", "score"):  # score wins over multiPoint
        for plugin in _as_list(_as_dict(plugins.get(point)).get("enabled")):
            name, weight = _as_dict(plugin).get("name"), _int(_as_dict(plugin).get("weight"))
            if isinstance(name, str) and weight:
                explicit[name] = weight
    return {n: explicit.get(n) or defaults.get(n, 1) for n in names}


def _check_extenders(extenders: list[Any]) -> list[Finding]:
    findings: list[Finding] = []
    binders: list[int] = []
    managed: dict[str, str] = {}
    for i, extender in enumerate(extenders):
        extender = _as_dict(extender)
        path = path_join("extenders", i)
        weight = _int(extender.get("weight")) or 0
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
        for j, resource in enumerate(_as_list(extender.get("managedResources"))):
            name = _as_dict(resource).get("name")
            if not isinstance(name, str):
                continue
            name_path = path_join(path, "managedResources", j, "name")
            if not is_extended_resource_name(name):
                findings.append(
                    invalid(
                        name_path,
                        name,
                        "is an invalid extended resource name (must be "
                        "domain-prefixed and outside kubernetes.io/)",
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


# --------------------------------------------------------------------------- args rules (by kind)
ArgsRule = Callable[[dict[str, Any], str], list[Finding]]


def _resource_name_findings(name: Any, path: str, rule: str = "resources.valid-name") -> list[Finding]:
    if isinstance(name, str) and not is_valid_resource_name(name):
        return [invalid(path, name, RESOURCE_NAME_HINT, rule)]
    return []


def _check_resource_list(items: list[Any], path: str, *, duplicates_are_errors: bool) -> list[Finding]:
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        name = _as_dict(item).get("name")
        name_path = path_join(path, i, "name")
        findings += _resource_name_findings(name, name_path)
        if not isinstance(name, str):
            continue
        if name in seen:
            if duplicates_are_errors:
                findings.append(duplicate(name_path, name, "resources.unique-name"))
            else:
                findings.append(
                    warning(
                        name_path,
                        f"resource {json.dumps(name)} is listed twice "
                        f"(also at index {seen[name]}); the last entry wins",
                        "resources.unique-name",
                        name,
                    )
                )
        else:
            seen[name] = i
    return findings


def _check_shape(shape: list[Any], path: str) -> list[Finding]:
    findings: list[Finding] = []
    previous: int | None = None
    for i, point in enumerate(shape):
        utilization = _int(_as_dict(point).get("utilization"))
        if utilization is None:
            continue
        if previous is not None and utilization <= previous:
            findings.append(
                invalid(
                    path_join(path, i, "utilization"),
                    utilization,
                    f"values must be sorted in strictly increasing order (previous point has {previous})",
                    "shape.increasing",
                )
            )
        previous = utilization
    return findings


def check_node_resources_fit_args(args: dict[str, Any], path: str) -> list[Finding]:
    findings: list[Finding] = []
    for i, name in enumerate(_as_list(args.get("ignoredResources"))):
        if isinstance(name, str) and not is_qualified_name(name):
            findings.append(
                invalid(
                    path_join(path, "ignoredResources", i),
                    name,
                    "must be a qualified name (e.g. example.com/foo)",
                    "fit.ignored-resources",
                )
            )
    for i, group in enumerate(_as_list(args.get("ignoredResourceGroups"))):
        if not isinstance(group, str):
            continue
        group_path = path_join(path, "ignoredResourceGroups", i)
        if "/" in group:
            findings.append(
                invalid(
                    group_path, group, "resource group name can't contain '/'", "fit.ignored-resource-groups"
                )
            )
        elif not is_qualified_name(group):
            findings.append(
                invalid(
                    group_path,
                    group,
                    "must be a qualified name (e.g. example.com)",
                    "fit.ignored-resource-groups",
                )
            )
    strategy = args.get("scoringStrategy")
    if not isinstance(strategy, dict):
        return findings
    strategy_path = path_join(path, "scoringStrategy")
    findings += _check_resource_list(
        _as_list(strategy.get("resources")),
        path_join(strategy_path, "resources"),
        duplicates_are_errors=False,
    )
    ratio = strategy.get("requestedToCapacityRatio")
    if strategy.get("type") == "RequestedToCapacityRatio":
        if ratio is None:
            findings.append(
                required(
                    path_join(strategy_path, "requestedToCapacityRatio"),
                    "must be specified when type is RequestedToCapacityRatio",
                    "fit.requested-to-capacity-ratio",
                )
            )
        else:
            findings += _check_shape(
                _as_list(_as_dict(ratio).get("shape")),
                path_join(strategy_path, "requestedToCapacityRatio", "shape"),
            )
    elif ratio is not None and isinstance(strategy.get("type"), str):
        findings.append(
            forbidden(
                path_join(strategy_path, "requestedToCapacityRatio"),
                "must be nil when type is not RequestedToCapacityRatio",
                "fit.requested-to-capacity-ratio",
            )
        )
    return findings


def check_balanced_allocation_args(args: dict[str, Any], path: str) -> list[Finding]:
    return _check_resource_list(
        _as_list(args.get("resources")), path_join(path, "resources"), duplicates_are_errors=True
    )


def check_default_preemption_args(args: dict[str, Any], path: str) -> list[Finding]:
    percentage = _int(args.get("minCandidateNodesPercentage"))
    absolute = _int(args.get("minCandidateNodesAbsolute"))
    if percentage == 0 and absolute == 0:
        return [
            invalid(
                path_join(path, "minCandidateNodesPercentage"),
                0,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
                "preemption.not-both-zero",
            ),
            invalid(
                path_join(path, "minCandidateNodesAbsolute"),
                0,
                "cannot be zero at the same time as minCandidateNodesPercentage",
                "preemption.not-both-zero",
            ),
        ]
    return []


def check_pod_topology_spread_args(args: dict[str, Any], path: str) -> list[Finding]:
    findings: list[Finding] = []
    constraints = _as_list(args.get("defaultConstraints"))
    defaulting = args.get("defaultingType", "System")
    if defaulting == "System" and constraints:
        findings.append(
            invalid(
                path_join(path, "defaultingType"),
                defaulting,
                'must be "List" when .defaultConstraints are not empty (it defaults to "System")',
                "topology-spread.defaulting-type",
            )
        )
    seen: dict[tuple[Any, Any], int] = {}
    for i, constraint in enumerate(constraints):
        constraint = _as_dict(constraint)
        item_path = path_join(path, "defaultConstraints", i)
        key = constraint.get("topologyKey")
        if isinstance(key, str) and key and not is_qualified_name(key):
            findings.append(
                invalid(
                    path_join(item_path, "topologyKey"),
                    key,
                    "must be a qualified name (label key)",
                    "topology-spread.topology-key",
                )
            )
        if "labelSelector" in constraint:
            findings.append(
                forbidden(
                    path_join(item_path, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                    "topology-spread.no-selector",
                )
            )
        marker = (key, constraint.get("whenUnsatisfiable"))
        if isinstance(key, str) and marker in seen:
            findings.append(
                duplicate(
                    item_path,
                    f"{{{key}, {marker[1]}}}",
                    "topology-spread.unique-constraint",
                    f"same topologyKey and whenUnsatisfiable as defaultConstraints[{seen[marker]}]",
                )
            )
        elif isinstance(key, str):
            seen[marker] = i
    return findings


def check_volume_binding_args(args: dict[str, Any], path: str) -> list[Finding]:
    shape = args.get("shape")
    if shape is None:
        return []
    findings = _check_shape(_as_list(shape), path_join(path, "shape"))
    findings.append(
        warning(
            path_join(path, "shape"),
            "shape is only accepted when the StorageCapacityScoring feature gate "
            "(VolumeCapacityPriority before Kubernetes 1.33) is enabled; otherwise kube-scheduler "
            "refuses to start",
            "volume-binding.feature-gate",
        )
    )
    return findings


def _check_node_selector_term(term: Any, path: str) -> list[Finding]:
    findings: list[Finding] = []
    term = _as_dict(term)
    for i, req in enumerate(_as_list(term.get("matchExpressions"))):
        req = _as_dict(req)
        req_path = path_join(path, "matchExpressions", i)
        key = req.get("key")
        if isinstance(key, str) and not is_qualified_name(key):
            findings.append(
                invalid(
                    path_join(req_path, "key"),
                    key,
                    "must be a qualified name (label key)",
                    "node-affinity.key",
                )
            )
        findings += _check_requirement_values(req, req_path)
    for i, req in enumerate(_as_list(term.get("matchFields"))):
        req = _as_dict(req)
        req_path = path_join(path, "matchFields", i)
        if isinstance(req.get("key"), str) and req["key"] != "metadata.name":
            findings.append(unsupported_field(path_join(req_path, "key"), req["key"]))
        operator = req.get("operator")
        values = _as_list(req.get("values"))
        if isinstance(operator, str) and operator not in ("In", "NotIn"):
            findings.append(
                invalid(
                    path_join(req_path, "operator"),
                    operator,
                    'matchFields only supports "In" and "NotIn"',
                    "node-affinity.match-fields",
                )
            )
        elif len(values) != 1:
            findings.append(
                invalid(
                    path_join(req_path, "values"),
                    values,
                    "must have exactly one value for matchFields",
                    "node-affinity.match-fields",
                )
            )
    return findings


def unsupported_field(path: str, value: str) -> Finding:
    return invalid(
        path, value, 'matchFields only supports the key "metadata.name"', "node-affinity.match-fields"
    )


def _check_requirement_values(req: dict[str, Any], req_path: str) -> list[Finding]:
    operator = req.get("operator")
    values = _as_list(req.get("values"))
    values_path = path_join(req_path, "values")
    if operator in ("In", "NotIn") and not values:
        return [
            required(values_path, f"must be specified when operator is {operator}", "node-affinity.values")
        ]
    if operator in ("Exists", "DoesNotExist") and values:
        return [
            forbidden(
                values_path, f"may not be specified when operator is {operator}", "node-affinity.values"
            )
        ]
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            return [
                invalid(
                    values_path,
                    values,
                    f"must have exactly one value when operator is {operator}",
                    "node-affinity.values",
                )
            ]
        if not (isinstance(values[0], str) and re.fullmatch(r"[-+]?[0-9]+", values[0])):
            return [
                invalid(
                    path_join(values_path, 0),
                    values[0],
                    f"must be an integer when operator is {operator}",
                    "node-affinity.values",
                )
            ]
    return []


def check_node_affinity_args(args: dict[str, Any], path: str) -> list[Finding]:
    affinity = _as_dict(args.get("addedAffinity"))
    base = path_join(path, "addedAffinity")
    findings: list[Finding] = []
    required_selector = _as_dict(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for i, term in enumerate(_as_list(required_selector.get("nodeSelectorTerms"))):
        findings += _check_node_selector_term(
            term, path_join(base, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", i)
        )
    for i, preferred in enumerate(_as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        findings += _check_node_selector_term(
            _as_dict(preferred).get("preference"),
            path_join(base, "preferredDuringSchedulingIgnoredDuringExecution", i, "preference"),
        )
    return findings


def check_fit_plus_args(args: dict[str, Any], path: str) -> list[Finding]:
    findings: list[Finding] = []
    for name in _as_dict(args.get("resources")):
        findings += _resource_name_findings(str(name), path_join(path, "resources", str(name)))
    return findings


def check_scarce_resource_args(args: dict[str, Any], path: str) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[str] = set()
    for i, name in enumerate(_as_list(args.get("resources"))):
        item_path = path_join(path, "resources", i)
        findings += _resource_name_findings(name, item_path)
        if isinstance(name, str) and name in seen:
            findings.append(
                warning(
                    item_path, f"resource {json.dumps(name)} is listed twice", "resources.unique-name", name
                )
            )
        elif isinstance(name, str):
            seen.add(name)
    return findings


def check_limit_aware_args(args: dict[str, Any], path: str) -> list[Finding]:
    findings: list[Finding] = []
    for field_name in ("scoringResourceWeights", "defaultLimitToAllocatableRatio"):
        for name in _as_dict(args.get(field_name)):
            findings += _resource_name_findings(str(name), path_join(path, field_name, str(name)))
    return findings


ARGS_RULES: dict[str, ArgsRule] = {
    "NodeResourcesFitArgs": check_node_resources_fit_args,
    "NodeResourcesBalancedAllocationArgs": check_balanced_allocation_args,
    "DefaultPreemptionArgs": check_default_preemption_args,
    "InterPodAffinityArgs": lambda args, path: [],
    "PodTopologySpreadArgs": check_pod_topology_spread_args,
    "VolumeBindingArgs": check_volume_binding_args,
    "NodeAffinityArgs": check_node_affinity_args,
    "NodeResourcesFitPlusArgs": check_fit_plus_args,
    "ResourceTypesArgs": check_fit_plus_args,
    "ScarceResourceAvoidanceArgs": check_scarce_resource_args,
    "LimitAwareArgs": check_limit_aware_args,
}
