"""Reading limitguard's configuration into the typed Config (limitguard.core.config): defaults, and the
rules a JSON Schema cannot state, every problem of every section found in one run as kube-scheduler's
validation aggregates its field.ErrorList; a rule that needs a value with a problem of its own is
skipped, and that value reads as its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limitguard.core.config import (
    DAEMONSET_KINDS,
    AvoidFullNodes,
    BestEffortDefaults,
    ClusterWritesConfig,
    Config,
    ConfigError,
    Enforcement,
    EventsConfig,
    HintMode,
    LimitAwareConfig,
    LiveStateConfig,
    NoLeaderPolicy,
    NotReadyPolicy,
    PlacementHints,
    ReplicasConfig,
    ReportsApi,
    ReportsConfig,
    UnboundPolicy,
)
from limitguard.core.fielderrors import FieldError, FieldErrors
from limitguard.core.kubeversion import VersionError, parse_minor
from limitguard.core.paths import path_join
from limitguard.core.pools import parse_node_pools
from limitguard.core.quantity import QuantityError, format_units, to_units
from limitguard.core.ratios import RatioError, RatioMap, parse_ratio_map


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

    def child(self, key: str) -> _Section:
        """The section under *key*, read the same way (its paths under this one's)."""
        child = _Section(None, self.errors)
        value = self(key)
        child.raw = value if isinstance(value, Mapping) else {}
        child.name = path_join(self.name, key)
        return child


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
    placement_hints = _placement_hints(raw, errors)
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
        placement_hints=placement_hints,
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


def _placement_hints(raw: Any, errors: FieldErrors) -> PlacementHints:
    """The `placementHints` section; avoidFullNodes' thresholds leave room for the hysteresis."""
    section, base = _Section(raw, errors, "placementHints"), PlacementHints()
    avoid, path = section.child("avoidFullNodes"), "placementHints.avoidFullNodes"
    full = AvoidFullNodes(
        enabled=bool(avoid("enabled", AvoidFullNodes.enabled)),
        below=int(avoid("below", AvoidFullNodes.below)),
        hysteresis=int(avoid("hysteresis", AvoidFullNodes.hysteresis)),
    )
    if full.below + full.hysteresis > 100 and not errors.invalid(f"{path}.below", f"{path}.hysteresis"):
        errors.add(path, f"below + hysteresis must be at most 100, got {full.below} + {full.hysteresis}")
    return PlacementHints(
        mode=HintMode(section("mode", base.mode)),
        weight=int(section("weight", base.weight)),
        scheduler_names=frozenset(map(str, section("schedulerNames", base.scheduler_names))),
        avoid_full_nodes=full,
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
