"""Shared set-up of the policy report tests: the CRDs from tests/fixtures, a keeper over a live feed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from limitguard.core.config import (
    Config,
    Enforcement,
    EventsConfig,
    LimitAwareConfig,
    ReportsApi,
    ReportsConfig,
)
from limitguard.core.reports.policyreport import REPORT_APIS
from limitguard.kube.reports.desired import Releases, next_releases
from limitguard.kube.reports.keeper import FindingsKeeper, KeeperSettings
from limitguard.kube.writes import ClusterWrites
from limitguard.schedcfg import Release
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import Connected
from tests.reportschemas import CRD_FILES, crd

WALL = 1_800_000_000.0  # a fixed wall clock: event names and times are the same on every run
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation")


def install_crds(server: FakeApiServer, api: ReportsApi = ReportsApi.OPENREPORTS) -> None:
    for file in CRD_FILES[api]:
        server.install_crd(crd(file))


def reports_config(
    api: ReportsApi = ReportsApi.OPENREPORTS,
    *,
    ratios: Mapping[str, int] | None = None,
    enforcement: Enforcement = Enforcement.DENY,
    namespace_enforcement: Mapping[str, Enforcement] | None = None,
    max_pod_reports: int = 1000,
    namespaces: tuple[str, ...] = (),
    events: bool = False,
    reports: bool = True,
    **limit_aware: Any,
) -> Config:
    return Config(
        limit_aware=LimitAwareConfig(
            default_ratios=dict(ratios or {"cpu": 100}),
            enforcement=enforcement,
            namespace_enforcement=dict(namespace_enforcement or {}),
            **limit_aware,
        ),
        reports=ReportsConfig(
            enabled=reports, api=api, max_pod_reports=max_pod_reports, scheduler_config_namespaces=namespaces
        ),
        events=EventsConfig(enabled=events),
    )


def fixed_releases(minor: int = 36) -> Callable[[], Releases]:
    """The cluster runs 1.<minor>; a test changes `.minor` on the returned callable's holder."""
    holder = {"minor": minor}

    def releases() -> Releases:
        return next_releases(Release(holder["minor"]), Release)

    releases.holder = holder  # type: ignore[attr-defined]
    return releases


@dataclass
class Keeping:
    keeper: FindingsKeeper
    writes: ClusterWrites
    connected: Connected

    async def settle(self) -> None:
        """One pass, then every write it queued (the rate limit sleeps on the test's clock)."""
        await self.keeper.pass_once()
        await self.writes.drain()


def keeping(
    connected: Connected,
    config: Config,
    releases: Callable[[], Releases] | None = None,
    *,
    max_per_second: float = 1000.0,
    burst: int = 1000,
    settings: KeeperSettings | None = None,
) -> Keeping:
    writes = ClusterWrites(connected.clock, max_per_second, burst)
    keeper = FindingsKeeper(
        config,
        connected.state,
        connected.feed.client,
        writes,
        connected.clock,
        lambda: WALL,
        "limitguard-test-0",
        releases,
        settings or KeeperSettings(refresh_seconds=300.0),
    )
    return Keeping(keeper, writes, connected)


def without_server_fields(report: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in report["metadata"].items() if k not in SERVER_FIELDS}
    return {**report, "metadata": metadata}


def stored_reports(server: FakeApiServer, api: ReportsApi = ReportsApi.OPENREPORTS) -> list[dict[str, Any]]:
    info = REPORT_APIS[api]
    found = []
    for plural in (info.cluster_plural, info.namespaced_plural):
        found += server.custom_objects(info.group, plural)
    return found


def by_scope(reports: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        f"{r['scope']['kind']}/{r['scope'].get('namespace', '')}/{r['scope']['name']}": r for r in reports
    }


def with_ratio(config: Config, **ratios: int) -> Config:
    return replace(config, limit_aware=replace(config.limit_aware, default_ratios=dict(ratios)))
