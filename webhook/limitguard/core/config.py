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

from limitguard.core.fielderrors import FieldError, FieldErrors
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
class PlacementHints:
    """The preferred node-affinity term the mutating webhook adds to new unbound pods."""

    mode: HintMode = HintMode.AUTO
    weight: int = 100  # the largest a preferred term may have
    # 500 hostname values (at most 63 characters each) keep the term under 32 KiB, a few times a
    # typical pod; more fitting nodes than that are more than a burst of pods fills before the
    # next ones are created against the new sums.
    max_nodes: int = 500
    # The schedulers whose NodeAffinity scoring reads the term; a pod naming none (the apiserver
    # defaults it to default-scheduler) counts as kube-scheduler's. koord-scheduler and the
    # scheduler-plugins scheduler run NodeAffinity too, under their own names.
    scheduler_names: frozenset[str] = frozenset({DEFAULT_SCHEDULER})


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


def defaults_problems(
    defaults: Mapping[str, Any], where: str, errors: FieldErrors | None = None
) -> list[FieldError]:
    """Rules for a {limits, requests} pair: quantities parse and no request exceeds its limit. A
    quantity *errors* already holds a problem for is left to that problem, and so is its pair."""
    problems: list[FieldError] = []
    parsed: dict[str, dict[str, int]] = {"limits": {}, "requests": {}}
    for kind in ("limits", "requests"):
        for resource, quantity in (defaults.get(kind) or {}).items():
            here = path_join(where, kind, resource)
            if errors is not None and errors.invalid(here):
                continue
            try:
                amount = to_units(resource, quantity)
            except QuantityError as error:
                problems.append(FieldError(here, str(error)))
                continue
            if amount <= 0:
                problems.append(FieldError(here, f"must be greater than 0, got {quantity!r}"))
            parsed[kind][resource] = amount
    for resource, request in parsed["requests"].items():
        limit = parsed["limits"].get(resource)
        if limit is not None and request > limit:
            problems.append(
                FieldError(
                    path_join(where, "requests", resource),
                    f"default request {format_units(resource, request)} "
                    f"exceeds default limit {format_units(resource, limit)}",
                )
            )
    return problems


class _Section:
    """One section of the document as the rules and the typed config read it: a value absent, null,
    or with a problem reported at it (or in it) reads as its default, so nothing is built from a
    value the user has to fix anyway and no rule judges it."""

    def __init__(self, raw: Any, errors: FieldErrors, name: str = "") -> None:
        section = raw if not name else raw.get(name) if isinstance(raw, Mapping) else None
        self.raw: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        self.errors, self.name = errors, name

    def __call__(self, key: str, default: Any = None) -> Any:
        value = self.raw.get(key)
        return default if value is None or self.errors.invalid(path_join(self.name, key)) else value


def config_from_mapping(raw: Mapping[str, Any], errors: FieldErrors | None = None) -> Config:
    """Build a Config from the document, applying defaults; raises ConfigError with every problem.

    *errors* holds what earlier stages (the JSON Schema) found: their values are not judged again,
    and the ConfigError lists them together with this stage's. `read_config` goes on to further
    stages before raising."""
    errors = FieldErrors() if errors is None else errors
    config = read_config(raw, errors)
    if errors:
        raise ConfigError(errors.texts())
    return config


def read_config(raw: Any, errors: FieldErrors) -> Config:
    """Every rule of every section, its problems added to *errors*; the Config means something only
    while *errors* stays empty (a value with a problem reads as its default)."""
    top = _Section(raw, errors)
    defaults, base_defaults = _Section(raw, errors, "bestEffortDefaults"), BestEffortDefaults()
    best_effort = BestEffortDefaults(
        enabled=bool(defaults("enabled", base_defaults.enabled)),
        limits={**base_defaults.limits, **defaults("limits", {})},
        requests={**base_defaults.requests, **defaults("requests", {})},
        require_namespace_label=bool(
            defaults("requireNamespaceLabel", base_defaults.require_namespace_label)
        ),
    )
    pair = {"limits": best_effort.limits, "requests": best_effort.requests}
    errors.extend(defaults_problems(pair, "bestEffortDefaults", errors))
    kubernetes_version = top("kubernetesVersion")
    if kubernetes_version is not None:
        try:
            parse_minor(kubernetes_version)
        except VersionError as error:
            errors.add("kubernetesVersion", str(error))
    validation = top("schedulerConfigValidation", {})
    excluded = top("excludedNamespaces")
    live, writes = _Section(raw, errors, "liveState"), _Section(raw, errors, "clusterWrites")
    return Config(
        limit_aware=_limit_aware(raw, errors),
        excluded_namespaces=frozenset(excluded) if excluded is not None else Config().excluded_namespaces,
        best_effort_defaults=best_effort,
        placement_hints=_placement_hints(top("placementHints", {})),
        while_not_ready=NotReadyPolicy(top("whileNotReady", NotReadyPolicy.ALLOW)),
        replicas=_replicas_config(raw, errors),
        live_state=LiveStateConfig(
            binding_write_horizon_seconds=float(
                live("bindingWriteHorizonSeconds", LiveStateConfig.binding_write_horizon_seconds)
            ),
            not_ready_after_seconds=float(
                live("notReadyAfterSeconds", LiveStateConfig.not_ready_after_seconds)
            ),
        ),
        cluster_writes=ClusterWritesConfig(
            max_per_second=float(writes("maxPerSecond", ClusterWritesConfig.max_per_second)),
            burst=int(writes("burst", ClusterWritesConfig.burst)),
        ),
        reports=_reports_config(_Section(raw, errors, "reports")),
        events=EventsConfig(enabled=bool(_Section(raw, errors, "events")("enabled", False))),
        kubernetes_version=kubernetes_version,
        # unset: resolved with kubernetesVersion, and credited to it
        scheduler_kubernetes_version=validation.get("kubernetesVersion"),
        scheduler_feature_gates=dict(validation.get("featureGates") or {}),
        scheduler_name=validation.get("scheduler") or "auto",
        use_scheduler_name=str(_Section(raw, errors, "useScheduler")("schedulerName", "")),
    )


def _limit_aware(raw: Any, errors: FieldErrors) -> LimitAwareConfig:
    """The `limitAware` section: the cluster default ratios, the node pools, the policies."""
    section, base = _Section(raw, errors, "limitAware"), LimitAwareConfig()
    ratios: RatioMap = {}
    try:
        ratios = parse_ratio_map(section("defaultLimitToAllocatableRatio", {}))
    except RatioError as error:
        errors.add("limitAware.defaultLimitToAllocatableRatio", str(error))
    # Every pool is checked even when another has a problem (a duplicate name is found either way).
    pools_path = "limitAware.nodePools"
    pools_raw = None if errors.covers(pools_path) else section.raw.get("nodePools")
    pools, pool_problems = parse_node_pools(pools_raw, pools_path, errors)
    errors.extend(pool_problems)
    return LimitAwareConfig(
        default_ratios=ratios,
        node_pools=pools,
        enforcement=Enforcement(section("enforcement", base.enforcement)),
        unbound_pods=UnboundPolicy(section("unboundPods", base.unbound_pods)),
        exempt_daemonset_pods=bool(section("exemptDaemonSetPods", base.exempt_daemonset_pods)),
        binding_ledger_ttl_seconds=float(section("bindingLedgerTTLSeconds", base.binding_ledger_ttl_seconds)),
        daemonset_kinds=DAEMONSET_KINDS
        | {(str(item["group"]), str(item["kind"])) for item in section("daemonSetOwnerKinds", ())},
        namespace_enforcement={
            str(namespace): Enforcement(action)
            for namespace, action in section("namespaceEnforcement", {}).items()
        },
    )


def _reports_config(section: _Section) -> ReportsConfig:
    base = ReportsConfig()
    pods = section("podReports", {})
    return ReportsConfig(
        enabled=bool(section("enabled", base.enabled)),
        api=ReportsApi(section("api", base.api)),
        pod_reports=bool(pods.get("enabled", base.pod_reports)),
        max_pod_reports=int(pods.get("max", base.max_pod_reports)),
        scheduler_config_namespaces=tuple(map(str, section("schedulerConfigNamespaces", ()))),
    )


def _placement_hints(raw: Mapping[str, Any]) -> PlacementHints:
    base = PlacementHints()
    return PlacementHints(
        mode=HintMode(raw.get("mode", base.mode)),
        weight=int(raw.get("weight", base.weight)),
        max_nodes=int(raw.get("maxNodes", base.max_nodes)),
        scheduler_names=frozenset(map(str, raw.get("schedulerNames", base.scheduler_names))),
    )


def _replicas_config(raw: Any, errors: FieldErrors) -> ReplicasConfig:
    """The `replicas` section, with client-go's rules (k8s.io/client-go
    `tools/leaderelection/leaderelection.go`, NewLeaderElector): leaseDuration > renewDeadline >
    1.2 x retryPeriod. A rule is skipped when one of its values has a problem of its own."""
    section, base = _Section(raw, errors, "replicas"), ReplicasConfig()
    replicas = ReplicasConfig(
        no_leader_policy=NoLeaderPolicy(section("noLeaderPolicy", base.no_leader_policy)),
        lease_duration_seconds=int(section("leaseDurationSeconds", base.lease_duration_seconds)),
        renew_deadline_seconds=float(section("renewDeadlineSeconds", base.renew_deadline_seconds)),
        retry_period_seconds=float(section("retryPeriodSeconds", base.retry_period_seconds)),
        forward_timeout_seconds=float(section("forwardTimeoutSeconds", base.forward_timeout_seconds)),
    )
    lease, renew, retry = (
        f"replicas.{key}" for key in ("leaseDurationSeconds", "renewDeadlineSeconds", "retryPeriodSeconds")
    )
    if (
        not errors.invalid(lease, renew)
        and replicas.lease_duration_seconds <= replicas.renew_deadline_seconds
    ):
        errors.add(lease, "must be greater than renewDeadlineSeconds")
    if (
        not errors.invalid(renew, retry)
        and replicas.renew_deadline_seconds <= 1.2 * replicas.retry_period_seconds
    ):
        errors.add(renew, "must be greater than 1.2 x retryPeriodSeconds")
    return replicas
