"""Two replicas of limitguard's app in one process, wired as `serve` wires a replica set
(limitguard.cli.replicas.route_through_leader), over real TLS on 127.0.0.1; leadership is fixed by the
test, never by time."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from limitguard.admission.forward import Forwarder, LeaderRouted
from limitguard.certs import generate as certs
from limitguard.cli.replicas import route_through_leader
from limitguard.core.config import Config, LimitAwareConfig, NoLeaderPolicy
from limitguard.http.app import Services
from limitguard.http.modes import HttpMode
from limitguard.kube.replica_metrics import ReplicaMetrics
from limitguard.state.store import ClusterState
from limitguard.testing.clock import FakeClock
from limitguard.testing.server import Serving, app_services, serving
from tests.integration.http.certificates import PEER_NAME
from tests.support import LEDGER_NEVER_EXPIRES, node, pod

CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 100}))
NEW_CA_DELAY, KUBELET_SPREAD = 180.0, 90.0  # the chart's delay; how far apart kubelet updates two pods


def cluster() -> ClusterState:
    """node1 has room for two of the four pending 1-cpu pods."""
    state = ClusterState(ledger_ttl_seconds=LEDGER_NEVER_EXPIRES)
    state.replace_nodes([node("node1", cpu="2")])
    state.replace_namespaces([])
    state.replace_pods([pod(f"p{index}", cpu="1", phase="Pending") for index in range(4)])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


class Fixed:
    """Leadership as the test sets it."""

    def __init__(self, deciding: bool, address: str | None = None) -> None:
        self.deciding = deciding
        self.address = address

    def leader_address(self) -> str | None:
        return self.address


async def parked(seconds: float) -> None:
    """The reloader's sleep: it checks only when the test calls check()."""
    await asyncio.Event().wait()


@dataclass
class Replica:
    state: ClusterState
    services: Services
    router: LeaderRouted
    forwarder: Forwarder
    served: Serving


@contextlib.asynccontextmanager
async def replica(
    cert_dir: Path,
    http_mode: HttpMode,
    leadership: Fixed,
    client: tuple[Path, Path] | None = None,
    clock: FakeClock | None = None,
) -> AsyncIterator[Replica]:
    """A replica serving *cert_dir*'s pair, wired as `serve` wires one (route_through_leader); it
    forwards with *client* (default: that same pair). With *clock*, a pair from a new CA is served
    NEW_CA_DELAY after its reloader first saw it."""
    state = cluster()
    services = app_services(state, CONFIG, http_mode=http_mode)
    ca, crt, key = (cert_dir / name for name in (certs.CA_CERT, certs.TLS_CERT, certs.TLS_KEY))
    forwarder = Forwarder(ca, *(client or (crt, key)), 30.0, PEER_NAME)
    metrics = ReplicaMetrics(services.metrics.registry)
    router = route_through_leader(
        services, leadership, forwarder, NoLeaderPolicy.DENY, metrics, ca, PEER_NAME
    )
    try:
        async with serving(
            services,
            cert_dir,
            reload_sleep=parked,
            trust_listeners=[forwarder.add_trust],
            pair_listeners=[forwarder.reload],
            clock=clock,
            new_ca_delay=NEW_CA_DELAY if clock is not None else 0.0,
        ) as served:
            yield Replica(state, services, router, forwarder, served)
    finally:
        await forwarder.close()


async def post(url: str, context: ssl.SSLContext, body: bytes) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session,
        session.post(url, data=body, headers={"Content-Type": "application/json"}) as answer,
    ):
        return answer.status, orjson.loads(await answer.read())
