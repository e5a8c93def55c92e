"""`limitguard serve`: its options, then serve HTTPS until SIGTERM and stop gracefully (what it builds
and starts is in `limitguard.cli.startup`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from limitguard.certs import generate as certs
from limitguard.certs.peers import PeerCAError
from limitguard.cli.mounts import MountError
from limitguard.cli.options import add_cluster_options, add_config_option, count, port_number, positive_int
from limitguard.cli.startup import start_serve
from limitguard.core.config import ConfigError
from limitguard.core.oversubscription import DEFAULT_SERIES_LIMIT
from limitguard.http.app import ServerSettings
from limitguard.http.eventloop import EVENT_LOOPS, EventLoopError, loop_factory
from limitguard.http.limits import ServingLimits
from limitguard.http.logs import SAMPLE_INITIAL, SAMPLE_THEREAFTER, Sampler
from limitguard.http.logs import configure as configure_logging
from limitguard.http.modes import HTTP_MODES
from limitguard.kube.filefeed import ClusterFileError

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_option(parser)
    add_cluster_options(parser)
    parser.add_argument(
        "--cert-dir", default="certs", help="directory with tls.crt/tls.key (generated when absent)"
    )
    parser.add_argument(
        "--new-ca-delay-seconds",
        type=count,
        default=0,
        help="serve a renewed certificate from a new CA only this long after it appears in --cert-dir, "
        "once every caller trusts that CA (docs/helm.md, renewing generated certificates); one from the "
        "same CA loads at once",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument(
        "--port", type=port_number, default=8443, help="HTTPS port, 1-65535 (0: any free port)"
    )
    parser.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=ServerSettings.max_body_bytes,
        help="largest AdmissionReview body accepted, in bytes",
    )
    add_limit_arguments(parser)
    parser.add_argument(
        "--event-loop",
        default="auto",
        choices=EVENT_LOOPS,
        help="auto: uvloop where installed, else asyncio's own loop (docs/configuration.md)",
    )
    parser.add_argument(
        "--http-mode",
        default="fast",
        choices=list(HTTP_MODES),
        help="fast: past aiohttp's per-request work where that was measured to pay, with a tested aiohttp "
        "only (else plain, with a warning); plain: aiohttp's public API only (docs/configuration.md)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="log level"
    )
    parser.add_argument(
        "--log-sample-initial",
        type=count,
        default=SAMPLE_INITIAL,
        help="per-request log lines of one level and message written each second before sampling; 0: every line",
    )
    parser.add_argument(
        "--log-sample-thereafter",
        type=count,
        default=SAMPLE_THEREAFTER,
        help="past those, every Nth line is written; 0: none",
    )
    parser.add_argument(
        "--metrics-port",
        type=port_number,
        default=0,
        help="also serve /metrics (only) on this plain-HTTP port; 0: metrics only on the HTTPS port",
    )
    parser.add_argument(
        "--metrics-host", help="address of the plain-HTTP metrics port (default: the --host address)"
    )
    parser.add_argument(
        "--node-ratio-series-limit",
        type=int,
        default=DEFAULT_SERIES_LIMIT,
        help="most (node, resource) series of the limitguard_node_limit_ratio gauges; the highest "
        "ratios are kept",
    )
    replicas = parser.add_argument_group(
        "replicas",
        "live mode with POD_NAME, POD_NAMESPACE and POD_IP set: one leader, chosen through a Lease, "
        "decides ledger requests (docs/replicas.md)",
    )
    replicas.add_argument("--lease-name", default="limitguard", help="Lease in POD_NAMESPACE")
    replicas.add_argument(
        "--peer-ca-file", help="CA that signed the replicas' serving certificate (default: CERT_DIR/ca.crt)"
    )
    replicas.add_argument(
        "--peer-server-name",
        help="name the serving certificate carries (e.g. the Service's DNS name), verified on the leader's "
        "certificate and required on a follower's client certificate; default: the leader's IP is "
        "verified and the certificate's first DNS name required",
    )
    add_client_auth_arguments(parser)


def add_client_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """Optional client-certificate authentication of the apiserver and kube-scheduler (docs/security.md)."""
    clients = parser.add_argument_group(
        "client authentication", "admit only callers presenting a certificate from --client-ca-file"
    )
    clients.add_argument(
        "--client-ca-file",
        help="PEM CA bundle that issued the apiserver's and kube-scheduler's client certificates",
    )
    clients.add_argument(
        "--client-name",
        action="append",
        default=[],
        dest="client_names",
        help="common name or DNS/URI SAN admitted on /validate and the /mutate routes (repeatable; none: open)",
    )
    clients.add_argument(
        "--extender-client-name",
        action="append",
        default=[],
        dest="extender_client_names",
        help="common name or DNS/URI SAN admitted on the extender routes (repeatable; none: open)",
    )


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """What any client can make the server hold (docs/configuration.md#connection-and-body-limits)."""
    limits = parser.add_argument_group("connection and body limits")
    defaults = ServingLimits()
    for flag, field, kind, text in (
        ("--header-timeout", "header_timeout_seconds", float, "seconds for TLS handshake + headers"),
        ("--idle-timeout", "idle_timeout_seconds", float, "seconds an idle keep-alive connection stays"),
        ("--max-connections-per-peer", "max_connections_per_peer", int, "open connections from one address"),
        ("--max-connections", "max_connections", int, "open connections in all"),
        ("--max-body-bytes-per-peer", "max_body_bytes_per_peer", int, "body bytes in flight per address"),
        ("--max-body-bytes-in-flight", "max_body_bytes_in_flight", int, "body bytes in flight in all"),
    ):
        limits.add_argument(flag, dest=field, type=kind, default=getattr(defaults, field), help=text)


async def serve(args: argparse.Namespace) -> int:
    running = await start_serve(args)
    print(
        f"limitguard serving on https://{args.host}:{running.port} (CA: {Path(args.cert_dir) / certs.CA_CERT})",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    log.info("shutting down: no new connections, finishing in-flight requests")
    await running.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level, sampler=Sampler(args.log_sample_initial, args.log_sample_thereafter))
    try:
        loop_name, new_loop = loop_factory(args.event_loop)
        log.info("event loop: " + loop_name, extra={"eventLoop": loop_name})
        with asyncio.Runner(loop_factory=new_loop) as runner:
            return runner.run(serve(args))
    except (MountError, EventLoopError, ConfigError, ClusterFileError, PeerCAError) as error:
        print(f"limitguard: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"limitguard: cannot serve: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        with contextlib.suppress(Exception):
            logging.shutdown()
