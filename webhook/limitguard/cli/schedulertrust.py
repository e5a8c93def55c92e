"""`limitguard scheduler-trust`: the sidecar that keeps the second scheduler's trust current.

It runs in the chart's kube-scheduler pod as a native sidecar (an init container with
`restartPolicy: Always`, so it has written the bundle before kube-scheduler starts) with
`shareProcessNamespace: true`, so it can end kube-scheduler (SIGTERM) for kubelet to start it
again on the new files. Which replica leads comes from the scheduler's own Lease: kube-scheduler's
holder identity is its hostname (the pod's name) and `_` and a UUID
(cmd/kube-scheduler/app/options/options.go `makeLeaderElectionConfig`). The decisions are
`limitguard.certs.trust.TrustKeeper`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path

from limitguard.certs.trust import (
    DEFAULT_LEADER_DELAY_SECONDS,
    DEFAULT_OVERLAP_SECONDS,
    DEFAULT_POLL_SECONDS,
    KeeperSettings,
    TrustError,
    TrustKeeper,
)
from limitguard.clock import SystemClock
from limitguard.kube.client import KubeClient, load_configuration
from limitguard.kube.leaseapi import KubeLeaseApi

log = logging.getLogger("limitguard.cli.schedulertrust")

PROCESS_NAME = "kube-scheduler"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ca-file",
        action="append",
        default=[],
        dest="ca_files",
        help="a CA bundle to trust (repeatable; a missing file holds none): limitguard's ca.crt, and the "
        "CA that will issue its next serving certificate where the certificate mode publishes it",
    )
    parser.add_argument(
        "--renewal-ca-file",
        action="append",
        default=[],
        dest="renewal_ca_files",
        help="limitguard's ca.crt in generate mode (repeatable): its first CA is trusted; the CAs after it, "
        "which a renewal replaced, until --overlap-seconds after the first was made",
    )
    parser.add_argument("--bundle", required=True, help="the file kube-scheduler's tlsConfig.caFile names")
    parser.add_argument(
        "--client-file",
        action="append",
        default=[],
        dest="client_files",
        help="tlsConfig.certFile / keyFile (repeatable): a change restarts kube-scheduler",
    )
    parser.add_argument("--lease", metavar="NAMESPACE/NAME", help="the scheduler's Lease (leader last)")
    parser.add_argument("--poll-seconds", type=float, default=DEFAULT_POLL_SECONDS)
    parser.add_argument(
        "--overlap-seconds",
        type=float,
        default=DEFAULT_OVERLAP_SECONDS,
        help="how long a CA that left the inputs, or that a renewal replaced, stays trusted",
    )
    parser.add_argument(
        "--leader-delay-seconds",
        type=float,
        default=DEFAULT_LEADER_DELAY_SECONDS,
        help="how long the leading replica waits after a change before it restarts",
    )
    parser.add_argument("--once", action="store_true", help="write the bundle and exit (tests)")


def end_kube_scheduler(proc: Path = Path("/proc")) -> bool:
    """SIGTERM to every kube-scheduler process in the (shared) process namespace; False if none."""
    ended = False
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if os.path.basename(argv0.decode(errors="replace")) == PROCESS_NAME:
            try:
                os.kill(int(entry.name), signal.SIGTERM)
                ended = True
            except ProcessLookupError:
                continue
    return ended


def holder_is(identity: object, pod_name: str) -> bool:
    """kube-scheduler's holder identity is `<hostname>_<uuid>`; in a pod the hostname is its name."""
    return isinstance(identity, str) and bool(pod_name) and identity.split("_", 1)[0] == pod_name


async def _keep(args: argparse.Namespace) -> None:
    settings = KeeperSettings(
        tuple(Path(path) for path in args.ca_files),
        Path(args.bundle),
        tuple(Path(path) for path in args.client_files),
        args.poll_seconds,
        args.overlap_seconds,
        args.leader_delay_seconds,
        tuple(Path(path) for path in args.renewal_ca_files),
    )
    pod_name = os.environ.get("POD_NAME", "")
    leases: KubeLeaseApi | None = None
    if args.lease:
        namespace, _, name = args.lease.partition("/")
        configuration, _ = load_configuration(None)
        leases = KubeLeaseApi(KubeClient(configuration), namespace, name, 5.0)

    async def leads() -> bool:
        if leases is None:
            return False
        try:
            lease = await leases.get()
        except Exception as error:  # unknown: wait as the leader would, never restart both at once
            log.warning("cannot read the scheduler's Lease", extra={"error": str(error)})
            return True
        return holder_is(((lease or {}).get("spec") or {}).get("holderIdentity"), pod_name)

    async def restart() -> bool:
        return end_kube_scheduler()

    keeper = TrustKeeper(settings, SystemClock(), restart, leads, time.time)
    keeper.prepare()
    if args.once:
        return
    try:
        await keeper.run()
    finally:
        if leases is not None:
            await leases.client.close()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    if not (args.ca_files or args.renewal_ca_files):
        print("limitguard scheduler-trust: give --ca-file or --renewal-ca-file", file=sys.stderr)
        return 2
    try:
        asyncio.run(_keep(args))
    except TrustError as error:
        print(f"limitguard scheduler-trust: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
