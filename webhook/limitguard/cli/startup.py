"""What `limitguard serve` builds and starts: the services, the cluster state and its feed, the
replica and the leader's work, the HTTPS listener; and how it stops, in order.

Tests and benchmarks start the same server in process with `start_serve`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import logging
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from limitguard.admission import configmaps
from limitguard.admission.mutating import Mutator
from limitguard.admission.validating import Validator
from limitguard.certs import generate as certs
from limitguard.certs.peers import PeerCAError
from limitguard.cli.configfile import load_config
from limitguard.cli.mounts import check_config_file, ensure_certificates, reissue_for_host
from limitguard.cli.policyreports import releases_for
from limitguard.cli.replicas import Replica, identity_from_env, join_replica_set, peer_address
from limitguard.clock import Clock, SystemClock
from limitguard.core.config import Config, HintMode
from limitguard.core.kuberelease import Named, from_file, resolve_release
from limitguard.core.oversubscription import DEFAULT_SERIES_LIMIT
from limitguard.core.podrules import PodRules, rules_for
from limitguard.http.app import ServerSettings, Services, create_app
from limitguard.http.limits import ServingLimits
from limitguard.http.metrics import Metrics
from limitguard.http.metrics_http import create_metrics_app
from limitguard.http.modes import choose_http_mode
from limitguard.http.peers import PeerGate
from limitguard.http.refusals import RefusalCollector
from limitguard.http.site import LimitedSite, limited_runner
from limitguard.http.tls import CertificateReloader, server_context
from limitguard.kube.client import KubeClient
from limitguard.kube.filefeed import load_cluster_file
from limitguard.kube.leaderwork import LeaderWork
from limitguard.kube.listwatch import ReflectorSettings
from limitguard.kube.livefeed import LiveFeed, start_live_feed
from limitguard.kube.nodeapi import NodeApi
from limitguard.kube.reports.desired import Releases
from limitguard.kube.reports.keeper import FindingsKeeper
from limitguard.kube.reports.metrics import FindingsCollector
from limitguard.kube.roomlabels import RoomLabeller
from limitguard.kube.unwritten import UnwrittenSettings
from limitguard.kube.write_metrics import ClusterWritesCollector
from limitguard.kube.writes import ClusterWrites
from limitguard.state.store import ClusterState

log = logging.getLogger("limitguard.cli.serve")  # the lines are serve's start-up and shutdown

SHUTDOWN_GRACE_SECONDS = 15.0


def serving_limits(args: argparse.Namespace) -> ServingLimits:
    return ServingLimits(**{name: getattr(args, name) for name in ServingLimits.__dataclass_fields__})


def build_services(
    config: Config,
    state: ClusterState,
    settings: ServerSettings | None = None,
    node_ratio_series_limit: int = DEFAULT_SERIES_LIMIT,
    cluster_version: str | None = None,
    *,
    config_path: str | None = None,
    cluster_asked: bool = False,
) -> Services:
    """Wire handlers to one state and one configuration (also used by tests and benchmarks).

    ConfigMaps are validated for the scheduler section's kubernetesVersion, else the top-level one
    (read from ``config_path``), else ``cluster_version`` (the apiserver's /version, when
    ``cluster_asked``), else the newest supported release."""
    configured = configmaps.configured_release(config, config_path)
    release, why = configmaps.configmap_release(
        configured,
        config.scheduler_feature_gates,
        cluster_version,
        config.scheduler_name,
        cluster_asked=cluster_asked,
    )
    log.info("scheduler configurations are validated for Kubernetes " + release.name, extra={"because": why})
    metrics = Metrics(state, config, node_ratio_series_limit)
    count_hint = metrics.placement_hints.inc
    handlers = {
        "validate": Validator(
            state,
            config,
            functools.partial(configmaps.configmap_check, release=release, scheduler=config.scheduler_name),
        ),
        # /mutate does every part in one review; the chart's entries call one part each
        "mutate": Mutator(state, config, count_hint=count_hint),
        "mutate-defaults": Mutator(state, config, scheduler=False, hints=False),
        # its webhook entry's namespaceSelector chose the namespace: the label is not read again
        "mutate-scheduler": Mutator(state, config, defaults=False, hints=False, namespace_selected=True),
        "mutate-placement": Mutator(state, config, defaults=False, scheduler=False, count_hint=count_hint),
    }
    services = Services(state, config, handlers, metrics, settings or ServerSettings())
    metrics.registry.register(RefusalCollector(services.refusals))
    return services


def pod_release(configured: Named | None, cluster_version: str | None, live: bool) -> PodRules:
    """The pod rules of the release that applies, said with why in the start-up log."""
    release, why = resolve_release(configured, cluster=cluster_version, cluster_asked=live)
    log.info(f"pod rules of Kubernetes {release.name} apply", extra={"because": why})
    if release.note:
        log.warning(release.note)
    return rules_for(release.minor)


@dataclass
class RunningServe:
    """A started `limitguard serve`: what stop() must take down, in order."""

    runner: web.AppRunner
    metrics_runner: web.AppRunner | None
    reloader: CertificateReloader
    feed: LiveFeed | None
    replica: Replica | None
    port: int
    services: Services
    leader_work: LeaderWork | None = None  # live mode: the cluster writes, while this replica leads

    async def stop(self, release: bool = True) -> None:
        """Graceful by default; release=False leaves the Lease held, as a crash would (tests)."""
        await self.reloader.stop()
        stopping = [self.runner.cleanup()]
        if self.replica is not None:
            stopping.append(self.replica.stop(release))
        await asyncio.gather(*stopping)
        if self.leader_work is not None:
            await self.leader_work.stop()
        if self.feed is not None:
            await self.feed.stop()
        if self.metrics_runner is not None:
            await self.metrics_runner.cleanup()


async def start_serve(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None, clock: Clock | None = None
) -> RunningServe:
    """Everything `serve` does before waiting for a signal (also used in-process by tests and benches)."""
    environ = os.environ if environ is None else environ
    check_config_file(args.config)
    config = load_config(args.config)
    # Certificates before the cluster feed: a missing TLS mount is reported before any API traffic.
    cert_dir = Path(args.cert_dir)
    hostnames = ["localhost", "127.0.0.1", "::1"] + (
        [args.host] if args.host not in ("0.0.0.0", "::") else []
    )
    if ensure_certificates(cert_dir, list(dict.fromkeys(hostnames))):
        log.info("generated a self-signed CA and serving certificate", extra={"dir": str(cert_dir)})
    elif args.host not in ("0.0.0.0", "::"):
        reissue_for_host(cert_dir, args.host)  # a self-signed set made for another --host
    state = ClusterState(
        config.limit_aware.binding_ledger_ttl_seconds, node_pools=config.limit_aware.node_pools
    )
    feed = None
    configured = from_file("kubernetesVersion", config.kubernetes_version, args.config)
    follow_release = configured is None and not args.cluster
    if not follow_release:  # before any pod is counted
        state.use_pod_rules(pod_release(configured, None, live=not args.cluster))
    if args.cluster:
        counts = load_cluster_file(state, args.cluster)
        gc.freeze()  # the loaded records hold no cycles: keep full collections from walking them all
        log.info("cluster state loaded from file", extra={"file": args.cluster, **counts})
    else:
        live = config.live_state
        feed = await start_live_feed(
            state,
            args.kubeconfig,
            follow_release=follow_release,
            settings=ReflectorSettings(unready_after_seconds=live.not_ready_after_seconds),
            unwritten=UnwrittenSettings(horizon_seconds=live.binding_write_horizon_seconds),
        )
    cluster_version = None
    if feed is not None and feed.release is not None:
        cluster_version = feed.release.version  # read before the first list, its rules handed to the state
        pod_release(None, cluster_version, live=True)
    services = build_services(
        config,
        state,
        ServerSettings(
            max_body_bytes=args.max_body_bytes,
            limits=serving_limits(args),
            http_mode=choose_http_mode(args.http_mode),
        ),
        args.node_ratio_series_limit,
        cluster_version,
        config_path=args.config,
        cluster_asked=feed is not None,
    )
    if feed is not None:
        feed.metrics = services.metrics

    leader_work = None
    if feed is not None:
        leader_work, labeller = leader_work_for(config, clock or SystemClock(), state, feed.client)
        services.metrics.registry.register(ClusterWritesCollector(leader_work.writes, labeller))
        if config.reports.enabled or config.events.enabled:
            keeper = findings_keeper(
                config,
                state,
                feed,
                leader_work,
                clock or SystemClock(),
                environ,
                cluster_version,
                args.config,
            )
            services.metrics.registry.register(FindingsCollector(keeper))
    identity = identity_from_env(environ)
    replica = None
    if feed is not None and identity is not None:
        replica = join_replica_set(
            services,
            feed,
            identity,
            lease_name=args.lease_name,
            ca_file=Path(args.peer_ca_file) if args.peer_ca_file else cert_dir / certs.CA_CERT,
            cert_file=cert_dir / certs.TLS_CERT,
            key_file=cert_dir / certs.TLS_KEY,
            peer_server_name=args.peer_server_name,
            config=config.replicas,
            clock=clock,
            leader_work=leader_work,
        )

    client_gates(services, args)
    cert_file, key_file = cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY
    client_cas = list(dict.fromkeys(gate.ca_file for gate in services.peer_gates.values()))
    context = server_context(cert_file, key_file, client_cas)
    trust_listeners = [gate.reload for gate in services.peer_gates.values()]
    pair_listeners = []
    if replica is not None:
        trust_listeners.append(replica.forwarder.add_trust)
        pair_listeners.append(replica.forwarder.reload)
    reloader = CertificateReloader(
        context,
        cert_file,
        key_file,
        client_cas=client_cas,
        trust_listeners=trust_listeners,
        pair_listeners=pair_listeners,
        new_ca_delay=args.new_ca_delay_seconds,
    )
    runner = limited_runner(
        create_app(services), services.settings.limits, shutdown_timeout=SHUTDOWN_GRACE_SECONDS
    )
    await runner.setup()
    site = LimitedSite(
        runner,
        args.host,
        args.port,
        limits=services.settings.limits,
        ssl_context=context,
        backlog=1024,
        refusals=services.refusals,
    )
    await site.start()
    port = site.port
    metrics_runner = None
    if args.metrics_port:
        metrics_runner = web.AppRunner(create_metrics_app(services.metrics), access_log=None)
        await metrics_runner.setup()
        metrics_host = args.metrics_host or args.host
        await web.TCPSite(metrics_runner, metrics_host, args.metrics_port).start()
        print(f"limitguard metrics on http://{metrics_host}:{args.metrics_port}/metrics", flush=True)
    reloader.start()
    if replica is not None and identity is not None:
        replica.start(peer_address(identity.ip, port))
    elif leader_work is not None:
        leader_work.started_leading()  # a single replica leads from the start
    return RunningServe(runner, metrics_runner, reloader, feed, replica, port, services, leader_work)


def leader_work_for(
    config: Config, clock: Clock, state: ClusterState, client: KubeClient
) -> tuple[LeaderWork, RoomLabeller | None]:
    """The leader's work and the one queue of cluster writes, under `clusterWrites`' rate limit:
    every writer that only the leader runs is registered here (the room labels and taints unless
    placement hints are `Never`), and starts and stops with leadership."""
    writes = ClusterWrites(clock, config.cluster_writes.max_per_second, config.cluster_writes.burst)
    work = LeaderWork(writes)
    labeller = None
    if config.placement_hints.mode is not HintMode.NEVER:
        labeller = RoomLabeller(state, config, writes, NodeApi(client), clock)
        work.add("room-labels", labeller.run)
    return work, labeller


def findings_keeper(
    config: Config,
    state: ClusterState,
    feed: LiveFeed,
    leader_work: LeaderWork,
    clock: Clock,
    environ: Mapping[str, str],
    cluster_version: str | None,
    config_path: str | None = None,
) -> FindingsKeeper:
    """Reports and events, kept by the leader; scheduler ConfigMaps judged for the release the
    cluster runs now (followed through /version) and the next minor."""

    def releases() -> Releases:
        follower = feed.release
        version = follower.version if follower is not None and follower.version else cluster_version
        return releases_for(config, version, config_path)

    instance = f"limitguard-{environ.get('POD_NAME') or socket.gethostname()}"
    keeper = FindingsKeeper(
        config, state, feed.client, leader_work.writes, clock, time.time, instance, releases
    )
    leader_work.add("findings", keeper.run)
    return keeper


def client_gates(services: Services, args: argparse.Namespace) -> None:
    """--client-ca-file with --client-name / --extender-client-name: those routes admit only those names."""
    names = {"admission": args.client_names, "extender": args.extender_client_names}
    if args.client_ca_file is None:
        if any(names.values()):
            raise PeerCAError("--client-name and --extender-client-name need --client-ca-file")
        return
    if not any(names.values()):
        raise PeerCAError(
            "--client-ca-file needs --client-name or --extender-client-name (else nothing is checked)"
        )
    for group, admitted in names.items():
        if admitted:
            services.peer_gates[group] = PeerGate(
                "client authentication", Path(args.client_ca_file), admitted
            )
