"""limitguard's own configuration, typed and with its defaults (the kube-scheduler args pattern).

Structure is checked by `limitguard/schemas/limitguard-config.schema.json`; `limitguard.core.configread`
reads a document into these types with the rules a JSON Schema cannot state.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from limitguard.core.pools import NodePool
from limitguard.core.ratios import RatioMap
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


class ReportsApi(enum.StrEnum):
    """The policy report API the leader writes (limitguard.core.reports.policyreport has each one's kinds)."""

    OPENREPORTS = "openreports"  # openreports.io/v1alpha1
    WGPOLICYK8S = "wgpolicyk8s"  # wgpolicyk8s.io/v1alpha2


@dataclass(frozen=True)
class ReportsConfig:
    """Findings as policy reports, kept by the leader (off by default: a write needs rights and consent)."""

    enabled: bool = False
    api: ReportsApi = ReportsApi.OPENREPORTS
    pod_reports: bool = True
    # A pod report per violating pod would let a cluster-wide violation write thousands of objects.
    max_pod_reports: int = 1000
    scheduler_config_namespaces: tuple[str, ...] = ()


@dataclass(frozen=True)
class EventsConfig:
    enabled: bool = False


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
    reports: ReportsConfig = field(default_factory=ReportsConfig)
    events: EventsConfig = field(default_factory=EventsConfig)
    # The release whose pod rules apply ("1.36", "v1.37.1"; None: the cluster's /version, or the newest)
    kubernetes_version: str | None = None
    # ConfigMap webhook: kube-scheduler release to validate for (None: kubernetes_version, the
    # cluster's /version, or the newest: limitguard.core.kuberelease decides, crediting the key)
    scheduler_kubernetes_version: str | None = None
    scheduler_feature_gates: Mapping[str, bool] = field(default_factory=dict)
    # ConfigMap webhook: the scheduler that reads them, unless a ConfigMap's limitguard.io/scheduler says
    scheduler_name: str = "auto"
    # Pods of namespaces labelled limitguard.io/use-scheduler=enabled go to this scheduler instead of
    # default-scheduler (empty: none is changed)
    use_scheduler_name: str = ""
