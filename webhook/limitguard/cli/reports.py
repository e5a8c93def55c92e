"""`limitguard reports delete`: remove every policy report limitguard wrote (the chart's uninstall hook).

Reports are owned by their nodes, pods and ConfigMaps, so garbage collection removes them only with
those; after an uninstall they would stay, saying what nobody keeps true any more. This command lists
the reports carrying limitguard's label, in the API chosen (or both), and deletes them through the
same coalesced, rate-limited queue as the leader's writes (`clusterWrites` of --config).
Exit codes: 0 deleted (or nothing to delete), 2 could not list or delete.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import aiohttp

from limitguard.cli.options import CommandError, add_config_option, load_limitguard_config
from limitguard.clock import SystemClock
from limitguard.core.config import Config, ReportsApi
from limitguard.core.reports.policyreport import REPORT_APIS
from limitguard.kube.client import ApiError, KubeClient, load_configuration
from limitguard.kube.reports.restapi import ReportRest, report_key
from limitguard.kube.writes import ClusterWrites, Outcome, Permit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["delete"], help="delete: remove every report limitguard wrote")
    parser.add_argument(
        "--api", choices=[*(api.value for api in ReportsApi), "all"], default="all", help="which report API"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig of the cluster (default: the pod's service account)")
    parser.add_argument("--context", help="the kubeconfig context")
    add_config_option(parser)


async def delete_reports(client: KubeClient, config: Config, apis: list[ReportsApi]) -> dict[str, int]:
    """Delete limitguard's reports of *apis* (those served); returns how many per API version."""
    writes = ClusterWrites(SystemClock(), config.cluster_writes.max_per_second, config.cluster_writes.burst)
    deleted: dict[str, int] = {}
    for api in apis:
        rest = ReportRest(client, REPORT_APIS[api])
        if not await rest.served():
            continue
        reports = await rest.list_own()
        for report in reports:
            key = report_key(rest.api, report)

            async def perform(
                permit: Permit, key: tuple[str, str, str] = key, rest: ReportRest = rest
            ) -> Outcome:
                await permit()
                try:
                    await rest.delete(key)
                except ApiError as error:
                    if error.status == 404:
                        return Outcome.GONE
                    raise
                return Outcome.WRITTEN

            writes.submit("report", key, perform)
        await writes.drain()
        writes.clear()  # no retry outlives the command: a failure is reported instead
        failed = writes.outcomes[("report", Outcome.FAILED)]
        if failed:
            raise CommandError(f"{failed} report(s) of {rest.api.api_version} could not be deleted")
        deleted[rest.api.api_version] = len(reports)
    return deleted


async def _run(args: argparse.Namespace, config: Config) -> dict[str, int]:
    configuration, _ = await asyncio.to_thread(load_configuration, args.kubeconfig, None, args.context)
    client = KubeClient(configuration)
    apis = list(ReportsApi) if args.api == "all" else [ReportsApi(args.api)]
    try:
        return await delete_reports(client, config, apis)
    finally:
        await client.close()


def run(args: argparse.Namespace) -> int:
    try:
        config = load_limitguard_config(args)
        deleted = asyncio.run(_run(args, config))
    except (CommandError, ApiError, aiohttp.ClientError, OSError, TimeoutError) as error:
        print(f"limitguard reports: {error}", file=sys.stderr)
        return 2
    if not deleted:
        print("no policy report API is served: nothing to delete")
    for api_version, count in deleted.items():
        print(f"{api_version}: {count} report(s) deleted")
    return 0
