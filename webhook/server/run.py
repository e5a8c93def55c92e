"""`limitguard serve`: build the services, serve HTTPS, stop gracefully on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

from webhook import certs
from webhook.admission.validating import Validator
from webhook.cluster.filesource import ClusterFileError, load_cluster_file
from webhook.cluster.state import ClusterState
from webhook.configfile import load_config
from webhook.core.config import Config, ConfigError
from webhook.logs import configure as configure_logging
from webhook.metrics import Metrics
from webhook.server.app import ServerSettings, Services, create_app
from webhook.server.tls import CertificateReloader, server_context

log = logging.getLogger("limitguard")

SHUTDOWN_GRACE_SECONDS = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="LimitGuardConfiguration YAML file (defaults apply when omitted)")
    parser.add_argument(
        "--cluster", help="cluster state file: `kubectl get nodes,pods,namespaces -A -o yaml`"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig for the live cluster (when --cluster is not given)")
    parser.add_argument(
        "--cert-dir", default="certs", help="directory with tls.crt/tls.key (generated when absent)"
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port", type=int, default=8443, help="HTTPS port")
    parser.add_argument("--max-body-bytes", type=int, default=ServerSettings.max_body_bytes)
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])


def build_services(
    config: Config,
    state: ClusterState,
    settings: ServerSettings | None = None,
    cluster_version: str | None = None,
) -> Services:
    """Wire handlers to one state and one configuration (also used by tests and benchmarks)."""
    from webhook.admission.configmaps import configmap_check, scheduler_release
    from webhook.admission.mutating import Mutator

    release, why = scheduler_release(
        config.scheduler_kubernetes_version, config.scheduler_feature_gates, cluster_version
    )
    log.info("scheduler configurations are validated for Kubernetes " + release.name, extra={"because": why})
    handlers = {
        "validate": Validator(state, config, functools.partial(configmap_check, release=release)),
        "mutate": Mutator(state, config),
    }
    return Services(state, config, handlers, Metrics(state, config), settings or ServerSettings())


async def _cluster_version(client: Any) -> str | None:
    """The cluster's version for the ConfigMap webhook; None (the newest supported) when /version fails."""
    try:
        return await client.server_version()
    except Exception as error:
        log.warning(
            "cannot read the cluster's /version; validating for the newest release",
            extra={"error": str(error)},
        )
        return None


async def serve(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    state = ClusterState(config.limit_aware.binding_ledger_ttl_seconds)
    feed = None
    cluster_version: str | None = None
    if args.cluster:
        counts = load_cluster_file(state, args.cluster)
        gc.freeze()  # the loaded records hold no cycles: keep full collections from walking them all
        log.info("cluster state loaded from file", extra={"file": args.cluster, **counts})
    else:
        from webhook.cluster.live import start_live_feed

        feed = await start_live_feed(state, args.kubeconfig)
        if config.scheduler_kubernetes_version is None:
            cluster_version = await _cluster_version(feed.client)
    services = build_services(
        config, state, ServerSettings(max_body_bytes=args.max_body_bytes), cluster_version
    )
    if feed is not None:
        feed.metrics = services.metrics

    cert_dir = Path(args.cert_dir)
    hostnames = ["localhost", "127.0.0.1", "::1"] + (
        [args.host] if args.host not in ("0.0.0.0", "::") else []
    )
    if certs.ensure_serving_certificates(cert_dir, list(dict.fromkeys(hostnames))):
        log.info("generated a self-signed CA and serving certificate", extra={"dir": str(cert_dir)})
    cert_file, key_file = cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY
    context = server_context(cert_file, key_file)
    reloader = CertificateReloader(context, cert_file, key_file)

    runner = web.AppRunner(create_app(services), shutdown_timeout=SHUTDOWN_GRACE_SECONDS, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port, ssl_context=context, backlog=1024)
    await site.start()
    reloader.start()
    print(
        f"limitguard serving on https://{args.host}:{args.port} (CA: {cert_dir / certs.CA_CERT})", flush=True
    )

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    log.info("shutting down: no new connections, finishing in-flight requests")
    await reloader.stop()
    if feed is not None:
        await feed.stop()
    await runner.cleanup()
    return 0


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level)
    try:
        return asyncio.run(serve(args))
    except (ConfigError, ClusterFileError) as error:
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
