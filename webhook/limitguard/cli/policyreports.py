"""`limitguard audit -o openreports|wgpolicyk8s`: the policy reports the leader would write, printed.

The objects come from the same `DesiredReports` the leader runs, over the same state: a cluster file or
the live cluster, and the scheduler ConfigMaps of `reports.schedulerConfigNamespaces` (from the file,
or listed from the live cluster), judged for the release the leader would use. Printed as one YAML
`v1` List, which `kubectl apply -f -` and GitOps tools take as it is.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import aiohttp
import yaml

from limitguard.admission.configmaps import configmap_release, configured_release
from limitguard.cli.options import CommandError
from limitguard.core.config import Config, ReportsApi
from limitguard.core.reports.policyreport import REPORT_APIS
from limitguard.kube.client import ApiError, KubeClient, load_configuration
from limitguard.kube.filefeed import ClusterFileError, read_objects
from limitguard.kube.reports.configmaps import SchedulerConfigMaps
from limitguard.kube.reports.desired import DesiredReports, Releases, next_releases
from limitguard.state.store import ClusterState

OUTPUTS = tuple(api.value for api in ReportsApi)
LIST_TIMEOUT = aiohttp.ClientTimeout(total=30.0)


def releases_for(config: Config, cluster_version: str | None, config_path: str | None = None) -> Releases:
    """The release the leader judges scheduler ConfigMaps for (as the ConfigMap webhook does), and the
    next minor."""
    gates, scheduler = config.scheduler_feature_gates, config.scheduler_name
    configured = configured_release(config, config_path)
    current, _ = configmap_release(configured, gates, cluster_version, scheduler, cluster_asked=True)
    return next_releases(current, lambda minor: configmap_release(f"1.{minor}", gates, None, scheduler)[0])


def _store(namespaces: Iterable[str], configmaps: Iterable[Mapping[str, Any]]) -> SchedulerConfigMaps:
    store = SchedulerConfigMaps(namespaces)
    sinks = {namespace: store.sink(namespace) for namespace in store.namespaces}
    for configmap in configmaps:
        namespace = str((configmap.get("metadata") or {}).get("namespace") or "")
        if namespace in sinks:
            sinks[namespace].upsert(configmap)
    for sink in sinks.values():
        sink.mark_synced(True)
    return store


def file_configmaps(path: str) -> list[Mapping[str, Any]]:
    try:
        return [obj for obj in read_objects(path) if obj.get("kind") == "ConfigMap"]
    except ClusterFileError as error:
        raise CommandError(str(error)) from None


async def _live_configmaps(args: argparse.Namespace, namespaces: Iterable[str]) -> list[Mapping[str, Any]]:
    configuration, _ = await asyncio.to_thread(
        load_configuration, args.kubeconfig, None, getattr(args, "context", None)
    )
    client = KubeClient(configuration)
    found: list[Mapping[str, Any]] = []
    try:
        for namespace in namespaces:
            token = ""
            while True:
                params = {"limit": "500", **({"continue": token} if token else {})}
                page = await client.get_json(
                    f"/api/v1/namespaces/{namespace}/configmaps", params, LIST_TIMEOUT
                )
                found += [item for item in page.get("items") or () if isinstance(item, Mapping)]
                token = str((page.get("metadata") or {}).get("continue") or "")
                if not token:
                    break
    finally:
        await client.close()
    return found


def scheduler_configmaps(args: argparse.Namespace, config: Config) -> SchedulerConfigMaps | None:
    namespaces = config.reports.scheduler_config_namespaces
    if not namespaces:
        return None
    if args.cluster:
        return _store(namespaces, file_configmaps(args.cluster))
    try:
        return _store(namespaces, asyncio.run(_live_configmaps(args, namespaces)))
    except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as error:
        raise CommandError(f"cannot list the scheduler ConfigMaps: {error}") from None


def policy_reports(
    args: argparse.Namespace, config: Config, state: ClusterState, cluster_version: str | None
) -> list[dict[str, Any]]:
    """The reports of `-o openreports|wgpolicyk8s` (its API wins over the configuration's)."""
    config = dataclasses.replace(
        config, reports=dataclasses.replace(config.reports, api=ReportsApi(args.output))
    )
    api = REPORT_APIS[config.reports.api]
    releases = releases_for(config, cluster_version, getattr(args, "config", None))
    desired = DesiredReports(api, config, state, scheduler_configmaps(args, config), lambda: releases)
    reports = list(asyncio.run(desired.compute()).reports.values())
    namespace = getattr(args, "namespace", None)
    if namespace:
        reports = [r for r in reports if r["metadata"].get("namespace") in (None, namespace)]
    return sorted(
        reports, key=lambda r: (r["kind"], r["metadata"].get("namespace", ""), r["metadata"]["name"])
    )


def render(reports: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": reports}, sort_keys=False, width=1 << 20
    )
