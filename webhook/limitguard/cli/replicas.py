"""`limitguard serve` as a member of a replica set: identity from the Downward API, the elector, the forwarding handler.

A process becomes a replica-set member only in live mode and when the chart's Downward API
variables are all present (POD_NAME, POD_NAMESPACE, POD_IP); otherwise it is a single decision
point, exactly as before.

The replicas authenticate each other with the one serving pair they all mount: a follower presents
it as its client certificate, and the leader's `/leader/*` admits only a certificate issued by the
replicas' CA that carries the peer name (the Service DNS name the chart passes).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from limitguard.admission.forward import ExtenderRelay, Forwarder, LeaderRouted, Leadership
from limitguard.certs.peers import own_peer_name, serving_pair_problem
from limitguard.clock import Clock, SystemClock
from limitguard.core.config import NoLeaderPolicy, ReplicasConfig
from limitguard.http.app import Services
from limitguard.http.peers import PeerGate
from limitguard.kube.catchup import WATCH_WAIT_SECONDS, pods_caught_up
from limitguard.kube.leader import ElectionTiming, Elector
from limitguard.kube.leaderwork import LeaderWork
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.kube.livefeed import LiveFeed
from limitguard.kube.replica_metrics import ReplicaMetrics

log = logging.getLogger(__name__)

IDENTITY_VARIABLES = ("POD_NAME", "POD_NAMESPACE", "POD_IP")


@dataclass(frozen=True)
class ReplicaIdentity:
    name: str  # the Lease's holderIdentity
    namespace: str  # where the Lease lives (the release namespace)
    ip: str


def identity_from_env(environ: Mapping[str, str]) -> ReplicaIdentity | None:
    values = [environ.get(variable, "").strip() for variable in IDENTITY_VARIABLES]
    return ReplicaIdentity(*values) if all(values) else None


def peer_address(ip: str, port: int) -> str:
    """host:port as a URL authority (IPv6 in brackets)."""
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(ip).version == 6:
            return f"[{ip}]:{port}"
    return f"{ip}:{port}"


class Replica:
    """A running member: the elector task and the forwarder, stopped together."""

    def __init__(self, elector: Elector, router: LeaderRouted, forwarder: Forwarder, grace: float) -> None:
        self.elector = elector
        self.router = router
        self.forwarder = forwarder
        self.grace = grace  # time for bindings the leader approved to be persisted before the lease is freed
        self._task: asyncio.Task[None] | None = None

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def start(self, address: str) -> None:
        """Campaign, telling the others to forward to *address* (POD_IP:port) while leading."""
        self.elector.address = address
        log.info("replica set member", extra={"identity": self.elector.identity, "address": address})
        self._task = asyncio.create_task(self.elector.run(), name="leader-election")

    async def stop(self, release: bool = True) -> None:
        """Graceful: stop deciding, wait the grace, free the lease. release=False is a crash (tests)."""
        was_leading = self.elector.resign()
        if self._task is not None:
            self._task.cancel()  # no renew may land after the release below
            await asyncio.gather(self._task, return_exceptions=True)
        if release and was_leading:
            await self.elector.release(self.grace)
        await self.forwarder.close()


def route_through_leader(
    services: Services,
    leadership: Leadership,
    forwarder: Forwarder,
    policy: NoLeaderPolicy,
    metrics: ReplicaMetrics,
    ca_file: Path,
    peer_name: str,
) -> LeaderRouted:
    """`/validate` decided by the leader, and the extender's calls answered by it; `/leader/*`
    admitting only certificates from *ca_file* that carry *peer_name*."""
    router = LeaderRouted(services.handlers["validate"], leadership, forwarder, policy, metrics)
    services.handlers["validate"] = router
    services.leader_handler = router.decide_as_leader
    services.extender_relay = ExtenderRelay(leadership, forwarder, metrics)
    services.peer_gates["leader"] = PeerGate("replica authentication", ca_file, [peer_name])
    return router


def join_replica_set(
    services: Services,
    feed: LiveFeed,
    identity: ReplicaIdentity,
    *,
    lease_name: str,
    ca_file: Path,
    cert_file: Path,
    key_file: Path,
    peer_server_name: str | None,
    config: ReplicasConfig,
    clock: Clock | None = None,
    leader_work: LeaderWork | None = None,
) -> Replica:
    """Replace the local `validate` handler by the leader-routed one, relay extender calls to the leader,
    put `/leader/*` behind the replicas' mutual TLS (services.peer_gates["leader"]); returns the (not started) replica."""
    clock = clock or SystemClock()
    timing = ElectionTiming(
        float(config.lease_duration_seconds), config.renew_deadline_seconds, config.retry_period_seconds
    )
    metrics = ReplicaMetrics(services.metrics.registry)
    pods = feed.reflectors["pods"]

    async def catch_up(version: str) -> str:
        # The watch usually gets there within a moment (pod events, bookmarks); a quiet cluster
        # gets a fresh list soon instead of waiting for the next bookmark.
        relist_after = min(timing.renew_deadline, WATCH_WAIT_SECONDS)
        return await pods_caught_up(pods, version, sleep=clock.sleep, relist_after=relist_after)

    elector = Elector(
        KubeLeaseApi(feed.client, identity.namespace, lease_name, timing.renew_deadline / 2),
        identity.namespace,
        lease_name,
        identity.name,
        "",  # set by Replica.start once the port is bound
        timing,
        now=clock.now,
        sleep=clock.sleep,
        catch_up=catch_up,
        metrics=metrics,
        callbacks=leader_work,
    )
    forwarder = Forwarder(ca_file, cert_file, key_file, config.forward_timeout_seconds, peer_server_name)
    peer_name = peer_server_name or own_peer_name(cert_file)
    if problem := serving_pair_problem(cert_file, peer_name):
        log.warning(
            "followers cannot authenticate to the leader: " + problem, extra={"certificate": str(cert_file)}
        )
    router = route_through_leader(
        services, elector, forwarder, config.no_leader_policy, metrics, ca_file, peer_name
    )
    return Replica(elector, router, forwarder, timing.lease_duration - timing.renew_deadline)
