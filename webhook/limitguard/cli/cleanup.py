"""`limitguard cleanup-nodes`: take every limit-room label and limit-full taint off the nodes.

The Helm chart runs it as a post-delete hook (after the server pods are gone: it waits until nobody
holds the leader's Lease, then deletes the Lease), and as a post-upgrade hook when placement hints
are set to `Never`. Run by hand it cleans at once. The writes go through the same queue and rate
limit as the server's (limitguard.kube.cleanup).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from limitguard.clock import SystemClock
from limitguard.core.config import ClusterWritesConfig
from limitguard.kube.cleanup import clean_nodes, wait_until_released
from limitguard.kube.client import KubeClient, KubeConfigError, load_configuration
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.kube.nodeapi import NodeApi
from limitguard.kube.writes import ClusterWrites


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster credentials)")
    parser.add_argument(
        "--lease-name",
        help="first wait until nobody holds this leader Lease (the server pods are gone), delete it after",
    )
    parser.add_argument("--lease-namespace", default="default", help="the Lease's namespace")
    parser.add_argument(
        "--wait-seconds", type=float, default=120.0, help="the longest wait for the Lease; then clean anyway"
    )
    parser.add_argument(
        "--max-per-second",
        type=float,
        default=ClusterWritesConfig.max_per_second,
        help="node writes a second",
    )
    parser.add_argument("--burst", type=int, default=ClusterWritesConfig.burst, help="node writes at once")


async def _clean(args: argparse.Namespace) -> int:
    configuration, _ = await asyncio.to_thread(load_configuration, args.kubeconfig)
    clock = SystemClock()
    client = KubeClient(configuration, clock=clock)
    try:
        lease = None
        if args.lease_name:
            lease = KubeLeaseApi(client, args.lease_namespace, args.lease_name, 10.0)
            if not await wait_until_released(lease, clock, args.wait_seconds):
                print(
                    f"the Lease {args.lease_name} is still held after {args.wait_seconds:g}s: cleaning anyway"
                )
        writes = ClusterWrites(clock, args.max_per_second, args.burst)
        outcomes, remaining = await clean_nodes(NodeApi(client), writes)
        if lease is not None and await lease.delete():
            print(f"deleted the Lease {args.lease_namespace}/{args.lease_name}")
    finally:
        await client.close()
    done = ", ".join(f"{count} {outcome}" for outcome, count in sorted(outcomes.items())) or "nothing to do"
    print(f"nodes cleaned of limitguard's labels and taint: {done}; still carrying them: {remaining}")
    return 0 if remaining == 0 else 1


def run(args: argparse.Namespace) -> int:
    if args.max_per_second <= 0 or args.burst < 1:
        print("limitguard cleanup-nodes: --max-per-second must be > 0 and --burst >= 1", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_clean(args))
    except KubeConfigError as error:
        print(f"limitguard cleanup-nodes: {error}", file=sys.stderr)
        return 2
