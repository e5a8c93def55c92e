"""What the policy reports should say now: built from the watched state and the scheduler ConfigMaps.

`limitguard audit -o openreports` and the leader's writer call the same `DesiredReports.compute`, so
what the command prints is what the leader writes for the same state. The pure report building is
`limitguard.core.reports`; this module only reads the state and judges ConfigMaps.

A pass is cheap when little changed: a node whose record and summed limits are unchanged keeps the
report built last time; the pods are walked (in slices, yielding to the event loop) only when some
node is over its ratio, and then only when an over node's sums changed or every `full_walk_every`
passes (a rolling update can swap a node's pods for others with equal limits).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from limitguard.clock import Clock, SystemClock
from limitguard.core.config import Config, Enforcement
from limitguard.core.fit import LimitRow
from limitguard.core.kubeversion import NEWEST_MINOR
from limitguard.core.reports.audit import PodShare
from limitguard.core.reports.policyreport import REPORT_LABEL, ObjectRef, ReportApi
from limitguard.core.reports.ratioreports import (
    NODE_FINDING,
    POD_FINDING,
    PodViolation,
    node_report,
    node_rows,
    over_resources,
    pod_report,
    pod_violation_rows,
    top_holders,
)
from limitguard.core.reports.schedreports import FINDING as CONFIG_FINDING
from limitguard.core.reports.schedreports import Verdict, configmap_report, configmap_scope, verdict
from limitguard.kube.reports.configmaps import SchedulerConfigMaps
from limitguard.kube.reports.restapi import ReportKey, report_key
from limitguard.schedcfg import Release, configmap_verdict
from limitguard.schedcfg.report import Report
from limitguard.state.records import NodeRecord
from limitguard.state.store import ClusterState

SLICE_SECONDS = 0.004  # longest run of work before yielding to the event loop (as the reflector's slices)
FULL_WALK_EVERY = 6
VIOLATING = (Enforcement.WARN, Enforcement.DRY_RUN)


@dataclass(frozen=True)
class Releases:
    """The release scheduler ConfigMaps are judged for now, and the next minor (None: unknown to limitguard)."""

    current: Release
    upcoming: Release | None
    next_name: str


def next_releases(current: Release, upcoming: Callable[[int], Release]) -> Releases:
    """*current* and the release after it, made by *upcoming* when limitguard knows that minor."""
    following = current.minor + 1
    return Releases(current, upcoming(following) if following <= NEWEST_MINOR else None, f"1.{following}")


ReleaseSource = Callable[[], Releases]


@dataclass
class Desired:
    """One pass's answer: the reports, and which kinds of finding it covered completely (only those
    may have reports deleted: ConfigMaps not listed yet say nothing about their reports)."""

    reports: dict[ReportKey, dict[str, Any]] = field(default_factory=dict)
    complete: set[str] = field(default_factory=set)
    pod_violations: Counter[str] = field(default_factory=Counter)  # by enforcement, unbounded
    pod_reports_dropped: int = 0


def _judged(report: Report, release: Release) -> Verdict:
    kubernetes = ", ".join(sorted({reader.kubernetes for reader in report.readers})) or release.name
    readers = sorted(
        {f"{r.scheduler} {r.build_name}" if r.build_name else r.scheduler for r in report.readers}
    )
    return verdict(kubernetes, ", ".join(readers) or release.scheduler, report.findings, report.certain)


def judge_configmap(
    configmap: Mapping[str, Any], releases: Releases, scheduler: str
) -> tuple[Verdict, Verdict | None] | None:
    """The ConfigMap judged for the running release and the next one; None when it holds no
    scheduler configuration."""
    report = configmap_verdict(dict(configmap), releases.current, scheduler)
    if report is None:
        return None
    upcoming = None
    if releases.upcoming is not None:
        ahead = configmap_verdict(dict(configmap), releases.upcoming, scheduler)
        upcoming = _judged(ahead, releases.upcoming) if ahead is not None else None
    return _judged(report, releases.current), upcoming


@dataclass
class _NodeBuilt:
    record: NodeRecord
    allocated: tuple[int, ...]
    rows: list[LimitRow]
    report: dict[str, Any]


class DesiredReports:
    def __init__(
        self,
        api: ReportApi,
        config: Config,
        state: ClusterState,
        configmaps: SchedulerConfigMaps | None = None,
        releases: ReleaseSource | None = None,
        *,
        full_walk_every: int = FULL_WALK_EVERY,
        clock: Clock | None = None,
    ) -> None:
        self.api = api
        self.config = config
        self.state = state
        self.configmaps = configmaps
        self.releases = releases
        self.full_walk_every = full_walk_every
        self.clock: Clock = clock or SystemClock()  # times the slices of work, as the reflector's
        self._nodes: dict[str, _NodeBuilt] = {}
        self._configmaps: dict[str, tuple[str, Releases, dict[str, Any] | None]] = {}
        self._walked: tuple[Any, ...] | None = None  # the over nodes' sums at the last pod walk
        self._passes = 0
        self._pods: tuple[dict[ReportKey, dict[str, Any]], Counter[str], int] = ({}, Counter(), 0)

    async def compute(self) -> Desired:
        """Every report that should exist now (the state must be ready)."""
        self._passes += 1
        desired = Desired()
        over = await self._node_reports(desired)
        await self._pod_reports(desired, over)
        self._configmap_reports(desired)
        return desired

    # -- nodes ---------------------------------------------------------------------------------
    async def _node_reports(self, desired: Desired) -> dict[str, list[LimitRow]]:
        """Every ratio'd node's report; returns the over nodes' rows."""
        limit_aware = self.config.limit_aware
        built: dict[str, _NodeBuilt] = {}
        stale: list[NodeRecord] = []
        deadline = self.clock.now() + SLICE_SECONDS
        for node in self.state.nodes():
            rows = node_rows(node, self.state.committed(node.name), limit_aware)
            if rows:
                allocated = tuple(row.allocated for row in rows)
                kept = self._nodes.get(node.name)
                if kept is not None and kept.record is node and kept.allocated == allocated:
                    built[node.name] = kept
                else:
                    built[node.name] = _NodeBuilt(node, allocated, rows, {})
                    stale.append(node)
            if self.clock.now() >= deadline:
                await asyncio.sleep(0)  # a cooperative yield, never the clock's sleep
                deadline = self.clock.now() + SLICE_SECONDS
        needing_holders = {n.name for n in stale if over_resources(built[n.name].rows)}
        shares = await self._shares(needing_holders) if needing_holders else {}
        for node in stale:
            entry = built[node.name]
            holders = top_holders(shares.get(node.name, ()), over_resources(entry.rows))
            entry.report = node_report(self.api, node, node.uid, entry.rows, holders)
        self._nodes = built
        for entry in built.values():
            desired.reports[report_key(self.api, entry.report)] = entry.report
        desired.complete.add(NODE_FINDING)
        return {name: e.rows for name, e in built.items() if over_resources(e.rows)}

    async def _shares(self, nodes: set[str]) -> dict[str, list[PodShare]]:
        found: dict[str, list[PodShare]] = {}
        kinds = self.config.limit_aware.daemonset_kinds
        deadline = self.clock.now() + SLICE_SECONDS
        for pod in self.state.pods():
            node = pod.counted_node
            if node in nodes and pod.limits:
                found.setdefault(node, []).append(PodShare(pod.key, pod.limits, pod.controller in kinds))
            if self.clock.now() >= deadline:
                await asyncio.sleep(0)  # a cooperative yield, never the clock's sleep
                deadline = self.clock.now() + SLICE_SECONDS
        return found

    # -- pods ----------------------------------------------------------------------------------
    async def _pod_reports(self, desired: Desired, over: dict[str, list[LimitRow]]) -> None:
        fingerprint = tuple(sorted((name, tuple(r.allocated for r in rows)) for name, rows in over.items()))
        if fingerprint != self._walked or self._passes % self.full_walk_every == 0:
            self._pods = await self._walk_pods(over)
            self._walked = fingerprint
        reports, counts, dropped = self._pods
        desired.pod_violations = Counter(counts)
        desired.pod_reports_dropped = dropped
        if self.config.reports.pod_reports:
            desired.reports.update(reports)
        desired.complete.add(POD_FINDING)

    async def _walk_pods(
        self, over: dict[str, list[LimitRow]]
    ) -> tuple[dict[ReportKey, dict[str, Any]], Counter[str], int]:
        if not over:
            return {}, Counter(), 0
        limit_aware = self.config.limit_aware
        excluded = self.config.excluded_namespaces
        violations: list[PodViolation] = []
        deadline = self.clock.now() + SLICE_SECONDS
        for pod in self.state.pods():
            rows = over.get(pod.counted_node)
            if rows is not None and pod.namespace not in excluded and not pod.mirror:
                action = limit_aware.namespace_enforcement.get(pod.namespace, limit_aware.enforcement)
                if action in VIOLATING and not limit_aware.exempts(pod.controller):
                    hit = pod_violation_rows(pod.limits, rows)
                    if hit:
                        scope = ObjectRef("v1", "Pod", pod.name, pod.namespace, pod.uid)
                        violations.append(PodViolation(scope, pod.counted_node, action, pod.limits, hit))
            if self.clock.now() >= deadline:
                await asyncio.sleep(0)  # a cooperative yield, never the clock's sleep
                deadline = self.clock.now() + SLICE_SECONDS
        counts = Counter(v.enforcement.value for v in violations)
        bound = self.config.reports.max_pod_reports
        kept = sorted(violations, key=lambda v: (-v.weight, v.scope.namespace, v.scope.name))[:bound]
        reports = {}
        for violation in kept:
            report = pod_report(self.api, violation)
            reports[report_key(self.api, report)] = report
        return reports, counts, max(len(violations) - bound, 0)

    # -- scheduler ConfigMaps -------------------------------------------------------------------
    def _configmap_reports(self, desired: Desired) -> None:
        configmaps = self.configmaps
        if configmaps is None or self.releases is None or not configmaps.synced:
            return
        releases = self.releases()
        scheduler = self.config.scheduler_name
        kept: dict[str, tuple[str, Releases, dict[str, Any] | None]] = {}
        for key, configmap in configmaps.objects.items():
            metadata = configmap.get("metadata") or {}
            version = str(metadata.get("resourceVersion") or "")
            cached = self._configmaps.get(key)
            if cached is not None and cached[0] == version and cached[1] == releases:
                kept[key] = cached
            else:
                judged = judge_configmap(configmap, releases, scheduler)
                report = None
                if judged is not None:
                    scope = configmap_scope(
                        str(metadata.get("namespace") or ""),
                        str(metadata.get("name") or ""),
                        str(metadata.get("uid") or ""),
                    )
                    report = configmap_report(self.api, scope, judged[0], judged[1], releases.next_name)
                kept[key] = (version, releases, report)
            report = kept[key][2]
            if report is not None:
                desired.reports[report_key(self.api, report)] = report
        self._configmaps = kept
        desired.complete.add(CONFIG_FINDING)


def finding_of(report: Mapping[str, Any]) -> str:
    """Which kind of finding a report holds (its limitguard.io/report label)."""
    labels = (report.get("metadata") or {}).get("labels") or {}
    return str(labels.get(REPORT_LABEL) or "")
