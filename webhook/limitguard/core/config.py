"""limitguard's own configuration: typed, defaulted, validated (the kube-scheduler args pattern).

Structure is checked by `limitguard/schemas/limitguard-config.schema.json` before this module sees the data;
here live the defaults and the rules a JSON Schema cannot state.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.kubeversion import VersionError, parse_minor
from limitguard.core.paths import path_join
from limitguard.core.pools import NodePool, parse_node_pools
from limitguard.core.quantity import QuantityError, format_units, to_units
from limitguard.core.ratios import RatioError, RatioMap, parse_ratio_map
from limitguard.core.scoring import DEFAULT_SCORERS, ScorerConfig
from limitguard.errors import LimitguardError


class ConfigError(LimitguardError, ValueError):
    """Invalid configuration; each entry of `problems` is `field.path: what is wrong`."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid configuration:\n  " + "\n  ".join(problems))
        self.problems = problems


class Enforcement(enum.StrEnum):
    DENY = "Deny"
    WARN = "Warn"
    DRY_RUN = "DryRun"


class UnboundPolicy(enum.StrEnum):
    DENY = "Deny"
    WARN = "Warn"
    IGNORE = "Ignore"


class NotReadyPolicy(enum.StrEnum):
    ALLOW = "Allow"
    DENY = "Deny"


# (API group, kind) of an ownerReference; a controller of one of these kinds runs a pod per node.
OwnerKind = tuple[str, str]
DAEMONSET_KINDS: frozenset[OwnerKind] = frozenset({("apps", "DaemonSet")})


@dataclass(frozen=True)
class LimitAwareConfig:
    default_ratios: RatioMap = field(default_factory=dict)
    # Ordered: a node without a valid annotation takes the first pool its labels match.
    node_pools: tuple[NodePool, ...] = ()
    enforcement: Enforcement = Enforcement.DENY
    unbound_pods: UnboundPolicy = UnboundPolicy.WARN
    exempt_daemonset_pods: bool = True
    binding_ledger_ttl_seconds: float = 60.0
    # apps/DaemonSet plus the DaemonSet-like kinds configured (e.g. OpenKruise's apps.kruise.io).
    daemonset_kinds: frozenset[OwnerKind] = DAEMONSET_KINDS
    # namespace -> its own enforcement (a rollout moves namespaces to Deny one at a time)
    namespace_enforcement: Mapping[str, Enforcement] = field(default_factory=dict)

    def per_namespace(self) -> dict[str, LimitAwareConfig]:
        """This configuration as it applies in each namespace that has its own enforcement."""
        return {
            namespace: dataclasses.replace(self, enforcement=action, namespace_enforcement={})
            for namespace, action in self.namespace_enforcement.items()
        }

    def exempts(self, controller: OwnerKind | None) -> bool:
        """Whether a pod with this controller is never rejected (it must run on every node)."""
        return self.exempt_daemonset_pods and controller in self.daemonset_kinds


class NoLeaderPolicy(enum.StrEnum):
    LOCAL = "Local"  # decide with this replica's own ledger (exact only per replica)
    ALLOW = "Allow"
    DENY = "Deny"


@dataclass(frozen=True)
class ReplicasConfig:
    """Leader election and forwarding between replicas (client-go's timing defaults)."""

    no_leader_policy: NoLeaderPolicy = NoLeaderPolicy.LOCAL
    lease_duration_seconds: int = 15
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    forward_timeout_seconds: float = 2.0


@dataclass(frozen=True)
class LiveStateConfig:
    """How the live cluster state handles writes that never happen and an apiserver out of reach."""

    # A validating webhook's answer may be followed by the write up to the slowest other webhook's
    # timeout later; past this, an approval the watch has not shown was never written.
    binding_write_horizon_seconds: float = 10.0
    not_ready_after_seconds: float = 60.0  # /readyz fails once the state went this long unrefreshed


@dataclass(frozen=True)
class ClusterWritesConfig:
    """The one rate limit of every write to the cluster (client-go's rest.Config defaults, QPS 5, burst 10)."""

    max_per_second: float = 5.0
    burst: int = 10


@dataclass(frozen=True)
class BestEffortDefaults:
    """Per-container defaults in exact units (millicores, bytes), plus the text they came from."""

    enabled: bool = True
    limits: Mapping[str, str] = field(default_factory=lambda: {"cpu": "500m", "memory": "512Mi"})
    requests: Mapping[str, str] = field(default_factory=lambda: {"cpu": "100m", "memory": "200Mi"})
    # Mutation is opted into: only namespaces labelled limitguard.io/defaults=enabled are defaulted
    # (False: every namespace not excluded or opted out by annotation).
    require_namespace_label: bool = True


# The scheduler of pods that name none (the apiserver's default for spec.schedulerName).
DEFAULT_SCHEDULER = "default-scheduler"


class HintMode(enum.StrEnum):
    AUTO = "Auto"  # where the pod's effective enforcement is Deny
    ALWAYS = "Always"
    NEVER = "Never"


@dataclass(frozen=True)
class AvoidFullNodes:
    """The `limitguard.io/limit-full:PreferNoSchedule` taint on nodes nearly full by limits."""

    enabled: bool = False
    # Tainted while some ratio'd resource has less than this percent of its limit capacity left...
    below: int = 10
    # ...and untainted only once every one has at least below + hysteresis percent left again.
    hysteresis: int = 5


@dataclass(frozen=True)
class PlacementHints:
    """The preferred node-affinity term the mutating webhook adds to new unbound pods, over the
    limit-room labels the leader keeps on the nodes."""

    mode: HintMode = HintMode.AUTO
    weight: int = 100  # the largest a preferred term may have
    # The schedulers whose NodeAffinity scoring reads the term; a pod naming none (the apiserver
    # defaults it to default-scheduler) counts as kube-scheduler's. koord-scheduler and the
    # scheduler-plugins scheduler run NodeAffinity too, under their own names.
    scheduler_names: frozenset[str] = frozenset({DEFAULT_SCHEDULER})
    avoid_full_nodes: AvoidFullNodes = field(default_factory=AvoidFullNodes)


@dataclass(frozen=True)
class Config:
    limit_aware: LimitAwareConfig = field(default_factory=LimitAwareConfig)
    excluded_namespaces: frozenset[str] = frozenset({"kube-system"})
    best_effort_defaults: BestEffortDefaults = field(default_factory=BestEffortDefaults)
    placement_hints: PlacementHints = field(default_factory=PlacementHints)
    while_not_ready: NotReadyPolicy = NotReadyPolicy.ALLOW
    scorers: tuple[ScorerConfig, ...] = DEFAULT_SCORERS  # the extender's prioritize (and explain)
    replicas: ReplicasConfig = field(default_factory=ReplicasConfig)
    live_state: LiveStateConfig = field(default_factory=LiveStateConfig)
    cluster_writes: ClusterWritesConfig = field(default_factory=ClusterWritesConfig)
    # The release whose pod rules apply ("1.36", "v1.37.1"; None: the cluster's /version, or the newest)
    kubernetes_version: str | None = None
    # ConfigMap webhook: kube-scheduler release to validate for (None: kubernetes_version, the
    # cluster's /version, or the newest)
    scheduler_kubernetes_version: str | None = None
    scheduler_feature_gates: Mapping[str, bool] = field(default_factory=dict)
    # ConfigMap webhook: the scheduler that reads them, unless a ConfigMap's limitguard.io/scheduler says
    scheduler_name: str = "auto"
    # Pods of namespaces labelled limitguard.io/use-scheduler=enabled go to this scheduler instead of
    # default-scheduler (empty: none is changed)
    use_scheduler_name: str = ""


def defaults_problems(defaults: Mapping[str, Any], where: str) -> list[str]:
    """Rules for a {limits, requests} pair: quantities parse and no request exceeds its limit."""
    problems: list[str] = []
    parsed: dict[str, dict[str, int]] = {"limits": {}, "requests": {}}
    for kind in ("limits", "requests"):
        for resource, quantity in (defaults.get(kind) or {}).items():
            try:
                amount = to_units(resource, quantity)
            except QuantityError as error:
                problems.append(f"{path_join(where, kind, resource)}: {error}")
                continue
            if amount <= 0:
                problems.append(
                    f"{path_join(where, kind, resource)}: must be greater than 0, got {quantity!r}"
                )
            parsed[kind][resource] = amount
    for resource, request in parsed["requests"].items():
        limit = parsed["limits"].get(resource)
        if limit is not None and request > limit:
            problems.append(
                f"{path_join(where, 'requests', resource)}: default request {format_units(resource, request)} "
                f"exceeds default limit {format_units(resource, limit)}"
            )
    return problems


def config_from_mapping(raw: Mapping[str, Any]) -> Config:
    """Build a Config from schema-valid data, applying defaults; raises ConfigError."""
    problems: list[str] = []
    limit_aware_raw = raw.get("limitAware") or {}
    try:
        ratios = parse_ratio_map(limit_aware_raw.get("defaultLimitToAllocatableRatio") or {})
    except RatioError as error:
        problems.append(f"limitAware.defaultLimitToAllocatableRatio: {error}")
        ratios = {}
    pools, pool_problems = parse_node_pools(limit_aware_raw.get("nodePools"))
    problems += pool_problems
    base = LimitAwareConfig()
    limit_aware = LimitAwareConfig(
        default_ratios=ratios,
        node_pools=pools,
        enforcement=Enforcement(limit_aware_raw.get("enforcement", base.enforcement)),
        unbound_pods=UnboundPolicy(limit_aware_raw.get("unboundPods", base.unbound_pods)),
        exempt_daemonset_pods=bool(limit_aware_raw.get("exemptDaemonSetPods", base.exempt_daemonset_pods)),
        binding_ledger_ttl_seconds=float(
            limit_aware_raw.get("bindingLedgerTTLSeconds", base.binding_ledger_ttl_seconds)
        ),
        daemonset_kinds=DAEMONSET_KINDS
        | {
            (str(item["group"]), str(item["kind"]))
            for item in limit_aware_raw.get("daemonSetOwnerKinds") or ()
        },
        namespace_enforcement={
            str(namespace): Enforcement(action)
            for namespace, action in (limit_aware_raw.get("namespaceEnforcement") or {}).items()
        },
    )
    defaults_raw = raw.get("bestEffortDefaults") or {}
    base_defaults = BestEffortDefaults()
    best_effort = BestEffortDefaults(
        enabled=bool(defaults_raw.get("enabled", base_defaults.enabled)),
        limits={**base_defaults.limits, **(defaults_raw.get("limits") or {})},
        requests={**base_defaults.requests, **(defaults_raw.get("requests") or {})},
        require_namespace_label=bool(
            defaults_raw.get("requireNamespaceLabel", base_defaults.require_namespace_label)
        ),
    )
    problems += defaults_problems(
        {"limits": best_effort.limits, "requests": best_effort.requests}, "bestEffortDefaults"
    )
    replicas, replica_problems = _replicas_config(raw.get("replicas") or {})
    problems += replica_problems
    placement_hints = _placement_hints(raw.get("placementHints") or {})
    avoid = placement_hints.avoid_full_nodes
    if avoid.below + avoid.hysteresis > 100:
        problems.append(
            "placementHints.avoidFullNodes: below + hysteresis must be at most 100, "
            f"got {avoid.below} + {avoid.hysteresis}"
        )
    if raw.get("kubernetesVersion") is not None:
        try:
            parse_minor(raw["kubernetesVersion"])
        except VersionError as error:
            problems.append(f"kubernetesVersion: {error}")
    if problems:
        raise ConfigError(problems)
    excluded = raw.get("excludedNamespaces")
    return Config(
        limit_aware=limit_aware,
        excluded_namespaces=frozenset(excluded) if excluded is not None else Config().excluded_namespaces,
        best_effort_defaults=best_effort,
        placement_hints=placement_hints,
        while_not_ready=NotReadyPolicy(raw.get("whileNotReady", NotReadyPolicy.ALLOW)),
        replicas=replicas,
        live_state=LiveStateConfig(
            binding_write_horizon_seconds=float(
                (raw.get("liveState") or {}).get(
                    "bindingWriteHorizonSeconds", LiveStateConfig.binding_write_horizon_seconds
                )
            ),
            not_ready_after_seconds=float(
                (raw.get("liveState") or {}).get(
                    "notReadyAfterSeconds", LiveStateConfig.not_ready_after_seconds
                )
            ),
        ),
        cluster_writes=ClusterWritesConfig(
            max_per_second=float(
                (raw.get("clusterWrites") or {}).get("maxPerSecond", ClusterWritesConfig.max_per_second)
            ),
            burst=int((raw.get("clusterWrites") or {}).get("burst", ClusterWritesConfig.burst)),
        ),
        kubernetes_version=raw.get("kubernetesVersion"),
        scheduler_kubernetes_version=(raw.get("schedulerConfigValidation") or {}).get("kubernetesVersion")
        or raw.get("kubernetesVersion"),
        scheduler_feature_gates=dict((raw.get("schedulerConfigValidation") or {}).get("featureGates") or {}),
        scheduler_name=(raw.get("schedulerConfigValidation") or {}).get("scheduler") or "auto",
        use_scheduler_name=str((raw.get("useScheduler") or {}).get("schedulerName") or ""),
    )


def _placement_hints(raw: Mapping[str, Any]) -> PlacementHints:
    base = PlacementHints()
    avoid = raw.get("avoidFullNodes") or {}
    return PlacementHints(
        mode=HintMode(raw.get("mode", base.mode)),
        weight=int(raw.get("weight", base.weight)),
        scheduler_names=frozenset(map(str, raw.get("schedulerNames", base.scheduler_names))),
        avoid_full_nodes=AvoidFullNodes(
            enabled=bool(avoid.get("enabled", AvoidFullNodes.enabled)),
            below=int(avoid.get("below", AvoidFullNodes.below)),
            hysteresis=int(avoid.get("hysteresis", AvoidFullNodes.hysteresis)),
        ),
    )


def _replicas_config(raw: Mapping[str, Any]) -> tuple[ReplicasConfig, list[str]]:
    """The `replicas` section, with client-go's rules: leaseDuration > renewDeadline > 1.2 x retryPeriod."""
    base = ReplicasConfig()
    replicas = ReplicasConfig(
        no_leader_policy=NoLeaderPolicy(raw.get("noLeaderPolicy", base.no_leader_policy)),
        lease_duration_seconds=int(raw.get("leaseDurationSeconds", base.lease_duration_seconds)),
        renew_deadline_seconds=float(raw.get("renewDeadlineSeconds", base.renew_deadline_seconds)),
        retry_period_seconds=float(raw.get("retryPeriodSeconds", base.retry_period_seconds)),
        forward_timeout_seconds=float(raw.get("forwardTimeoutSeconds", base.forward_timeout_seconds)),
    )
    problems = []
    if replicas.lease_duration_seconds <= replicas.renew_deadline_seconds:
        problems.append("replicas.leaseDurationSeconds: must be greater than renewDeadlineSeconds")
    if replicas.renew_deadline_seconds <= 1.2 * replicas.retry_period_seconds:
        problems.append("replicas.renewDeadlineSeconds: must be greater than 1.2 x retryPeriodSeconds")
    return replicas, problems
