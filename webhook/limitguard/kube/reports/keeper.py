"""The leader's findings loop: reports and events, every `sync_seconds`, from the watched state.

Runs as leader work (limitguard.kube.leaderwork): started when this replica decides, cancelled when
it steps down. Each start begins from what it observes - the reports are listed again, and the
transitions that make events start from them (or, without reports, from the first pass, which
records no event: a failover must not announce every node already over its ratio).

When the report API is not served (its CRDs are not installed) limitguard says so once in its log,
sets `limitguard_reports_api_available` to 0, looks again every `discovery_seconds` and keeps
serving; events and the metrics go on without it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from limitguard.clock import Clock
from limitguard.core.config import Config
from limitguard.core.reports.policyreport import REPORT_APIS, ObjectRef
from limitguard.core.reports.ratioreports import NODE_FINDING, NODE_POLICY
from limitguard.core.reports.schedreports import CURRENT_POLICY
from limitguard.core.reports.schedreports import FINDING as CONFIG_FINDING
from limitguard.core.text import clip
from limitguard.kube.client import ApiError
from limitguard.kube.listwatch import ListWatchClient, ReflectorSettings
from limitguard.kube.reports.configmaps import SchedulerConfigMaps
from limitguard.kube.reports.desired import Desired, DesiredReports, ReleaseSource, finding_of
from limitguard.kube.reports.events import NORMAL, WARNING, EventRecorder
from limitguard.kube.reports.restapi import EventRest, JsonClient, ReportKey, ReportRest
from limitguard.kube.reports.writer import REFRESH_SECONDS, ReportWriter, verdict_rows
from limitguard.kube.writes import ClusterWrites
from limitguard.state.store import ClusterState

log = logging.getLogger("limitguard.reports")

EXCEEDED, RESTORED, CONFIG_INVALID = "LimitRatioExceeded", "LimitRatioRestored", "SchedulerConfigInvalid"
RATIO_ACTION, CONFIG_ACTION = "CheckLimitRatio", "ValidateSchedulerConfig"


@dataclass(frozen=True)
class KeeperSettings:
    sync_seconds: float = 10.0
    discovery_seconds: float = 60.0
    refresh_seconds: float = REFRESH_SECONDS


def scope_of(report: Mapping[str, Any]) -> ObjectRef:
    scope = report.get("scope") or {}
    return ObjectRef(
        str(scope.get("apiVersion") or ""),
        str(scope.get("kind") or ""),
        str(scope.get("name") or ""),
        str(scope.get("namespace") or ""),
        str(scope.get("uid") or ""),
    )


def _failing(report: Mapping[str, Any], policy: str) -> list[Mapping[str, Any]]:
    results = report.get("results") or []
    return [r for r in results if r.get("policy") == policy and r.get("result") == "fail"]


Rows = tuple[tuple[str, str, str, str], ...]  # (policy, rule, status, path): limitguard.kube.reports.writer


def _over(rows: Rows) -> frozenset[str]:
    return frozenset(rule for policy, rule, status, _ in rows if policy == NODE_POLICY and status == "fail")


def _errors(rows: Rows) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (rule, path)
            for policy, rule, status, path in rows
            if policy == CURRENT_POLICY and status == "fail"
        )
    )


class Transitions:
    """Nodes over their ratio and invalid scheduler ConfigMaps as last seen; an event on each change."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder
        self._over: dict[ReportKey, frozenset[str]] | None = None
        self._errors: dict[ReportKey, tuple[tuple[str, str], ...]] | None = None

    def reset(self) -> None:
        self._over = self._errors = None

    def observe(
        self,
        reports: Mapping[ReportKey, Mapping[str, Any]],
        baseline: Mapping[ReportKey, Mapping[str, Any]] | None,
    ) -> None:
        first = self._over is None
        before_over, before_errors = self._over or {}, self._errors or {}
        over: dict[ReportKey, frozenset[str]] = {}
        errors: dict[ReportKey, tuple[tuple[str, str], ...]] = {}
        for key, report in reports.items():
            finding = finding_of(report)
            rows = verdict_rows(report)
            if finding == NODE_FINDING:
                over[key] = now = _over(rows)
                was = self._was(first, key, before_over, baseline, _over, now, frozenset())
                if now and not was:
                    note = "; ".join(str(r.get("message")) for r in _failing(report, NODE_POLICY))
                    self.recorder.record(scope_of(report), WARNING, EXCEEDED, RATIO_ACTION, note)
                elif was and not now:
                    note = f"{', '.join(sorted(was))} limits are within the limit-to-allocatable ratio again"
                    self.recorder.record(scope_of(report), NORMAL, RESTORED, RATIO_ACTION, note)
            elif finding == CONFIG_FINDING:
                errors[key] = found = _errors(rows)
                was_errors = self._was(first, key, before_errors, baseline, _errors, found, ())
                if found and found != was_errors:
                    failing = _failing(report, CURRENT_POLICY)
                    release = (failing[0].get("properties") or {}).get("kubernetesVersion", "")
                    note = f"{len(failing)} error(s) under Kubernetes {release}: " + "; ".join(
                        str(r.get("message")) for r in failing
                    )
                    self.recorder.record(
                        scope_of(report), WARNING, CONFIG_INVALID, CONFIG_ACTION, clip(note, 1024)
                    )
        self._over, self._errors = over, errors

    @staticmethod
    def _was(
        first: bool,
        key: ReportKey,
        before: Mapping,
        baseline: Mapping | None,
        read: Callable,
        now: Any,
        empty: Any,
    ) -> Any:
        """The last state seen: this leader's, else (first pass) the report the cluster held, else now."""
        if not first:
            return before.get(key, empty)  # a resource seen for the first time starts clean
        if baseline is not None and key in baseline:
            return read(baseline[key].verdicts)
        return now


class FindingsKeeper:
    def __init__(
        self,
        config: Config,
        state: ClusterState,
        client: JsonClient,
        writes: ClusterWrites,
        clock: Clock,
        wall: Callable[[], float],
        instance: str,
        releases: ReleaseSource | None = None,
        settings: KeeperSettings | None = None,
        watch_settings: ReflectorSettings | None = None,
    ) -> None:
        self.config = config
        self.state = state
        self.client = client
        self.clock = clock
        self.settings = settings or KeeperSettings()
        self.watch_settings = watch_settings
        api = REPORT_APIS[config.reports.api]
        namespaces = config.reports.scheduler_config_namespaces
        self.configmaps = SchedulerConfigMaps(namespaces) if namespaces else None
        self.desired = DesiredReports(api, config, state, self.configmaps, releases, clock=clock)
        self.rest = ReportRest(client, api)
        self.writer: ReportWriter | None = None
        if config.reports.enabled:
            self.writer = ReportWriter(
                self.rest,
                writes,
                clock,
                self._alive,
                refresh_seconds=self.settings.refresh_seconds,
                on_missing_api=self._api_gone,
            )
        self.recorder: EventRecorder | None = None
        self.transitions: Transitions | None = None
        if config.events.enabled:
            self.recorder = EventRecorder(EventRest(client), writes, clock, wall, instance)
            self.transitions = Transitions(self.recorder)
        self.available: bool | None = None  # the report API: None until discovery answered
        self.last: Desired | None = None
        self._discover_at = float("-inf")

    async def run(self) -> None:
        """Leader work: a pass every sync_seconds until cancelled."""
        if self.writer is not None:
            self.writer.forget()  # a new term starts from what the cluster holds
        if self.transitions is not None:
            self.transitions.reset()
        watching = None
        if self.configmaps is not None:
            client: ListWatchClient = self.client  # type: ignore[assignment]  # KubeClient is both
            watching = asyncio.create_task(
                self.configmaps.run(client, self.clock, self.watch_settings), name="reports-configmaps"
            )
        try:
            while True:
                await self.pass_once()
                await self.clock.sleep(self.settings.sync_seconds)
        finally:
            if watching is not None:
                watching.cancel()
                await asyncio.gather(watching, return_exceptions=True)

    async def pass_once(self) -> Desired | None:
        if not self.state.ready:
            return None
        if self.writer is not None:
            await self._discover()
        desired = await self.desired.compute()
        self.last = desired
        if self.writer is not None and self.available:
            try:
                if not self.writer.listed:
                    await self.writer.load()
                self.writer.sync(desired)
            except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as error:
                log.warning(
                    "cannot list policy reports; trying again", extra={"error": clip(str(error), 300)}
                )
        if self.transitions is not None and self.recorder is not None:
            listed = self.writer is not None and self.writer.listed
            self.transitions.observe(desired.reports, self.writer.observed if listed else None)  # type: ignore[union-attr]
            self.recorder.tick()
        return desired

    async def _discover(self) -> None:
        now = self.clock.now()
        if self.available or now < self._discover_at:
            return
        self._discover_at = now + self.settings.discovery_seconds
        api = self.rest.api.api_version
        try:
            served = await self.rest.served()
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as error:
            log.warning(
                "cannot tell whether policy reports are served",
                extra={"api": api, "error": clip(str(error), 300)},
            )
            return
        if served:
            log.info("policy reports are served: writing them", extra={"api": api})
        elif self.available is None:
            log.warning(
                "policy reports are not served (their CRDs are not installed): no reports are written; "
                f"looking again every {self.settings.discovery_seconds:g}s",
                extra={"api": api},
            )
        self.available = served

    def _api_gone(self) -> None:
        if self.available:
            log.warning(
                "policy reports are no longer served: their CRDs were removed",
                extra={"api": self.rest.api.api_version},
            )
        self.available = None  # look again at the next pass, and say so if they stay away
        self._discover_at = float("-inf")
        if self.writer is not None:
            self.writer.forget()

    def _alive(self, scope: Mapping[str, Any]) -> bool:
        """Whether a report's resource still exists (else garbage collection removes the report).

        A pod that left the state may only have finished (Succeeded and Failed pods are not watched):
        its report is deleted rather than left to a garbage collection that may never come."""
        ref = scope_of({"scope": scope})
        if ref.kind == "Node":
            node = self.state.node(ref.name)
            return node is not None and (not ref.uid or node.uid == ref.uid)
        if ref.kind == "ConfigMap" and self.configmaps is not None:
            return self.configmaps.exists(f"{ref.namespace}/{ref.name}", ref.uid)
        return True

    def reports(self) -> Iterable[Mapping[str, Any]]:
        return self.last.reports.values() if self.last is not None else ()
