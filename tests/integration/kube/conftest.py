"""Fixtures for the live feed: a fake API server on loopback and limitguard connected to it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from limitguard.core.config import Config
from limitguard.http.metrics import Metrics
from limitguard.kube.client import KubeClient, load_configuration
from limitguard.kube.leader import LeaseRecord, lease_object
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.kube.livefeed import LiveFeed, start_live_feed
from limitguard.kube.reflector import ReflectorSettings
from limitguard.state.store import ClusterState
from limitguard.testing.clock import FakeClock, ManualClock
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import FAST, TOKEN, Connected, eventually, write_kubeconfig
from tests.integration.kube.replicaset import ReplicaSet
from tests.integration.kube.schedulermodel import LEASE, NAMESPACE
from tests.support import SERVING_LOOPS, LoopFactories


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> LoopFactories:
    """The live feed, Leases and replicas run inside `limitguard serve`: once per loop it may run on."""
    return SERVING_LOOPS


@pytest.fixture
async def apiserver() -> AsyncIterator[FakeApiServer]:
    server = FakeApiServer(token=TOKEN, bookmark_interval=0.2)
    yield server
    await server.stop()


@pytest.fixture
async def connect(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[Callable[..., object]]:
    """Start the server (after the test populated it) and limitguard's feed against it.

    The feed and the state's ledger share one FakeClock that jumps through every backoff, so
    retries cost no real time and a ledger entry ages only when the test advances the clock.
    """
    feeds: list[LiveFeed] = []

    async def start(
        settings: ReflectorSettings = FAST, wait_ready: bool = True, config: Config | None = None
    ) -> Connected:
        config = config or Config()
        url = await apiserver.start()
        clock = FakeClock(autojump=True)
        state = ClusterState(clock=clock, node_pools=config.limit_aware.node_pools)
        kubeconfig = write_kubeconfig(tmp_path, url)
        feed = await start_live_feed(state, kubeconfig, settings=settings, clock=clock)
        feeds.append(feed)
        metrics = Metrics(state, config)
        feed.metrics = metrics
        if wait_ready:
            await eventually(lambda: state.ready, "state ready")
        return Connected(state, metrics, feed, clock)

    yield start
    for feed in feeds:
        await feed.stop()


@pytest.fixture
async def replicas(tmp_path: Path) -> AsyncIterator[ReplicaSet]:
    """N real `limitguard serve` instances against one fake apiserver, on the test's ManualClock."""
    apiserver = FakeApiServer(token=TOKEN, bookmark_interval=0.2)
    replica_set = ReplicaSet(apiserver, ManualClock(), tmp_path)
    yield replica_set
    await replica_set.stop()
    await apiserver.stop()


@pytest.fixture
async def lease_api(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[KubeLeaseApi]:
    """The second scheduler's Lease on the started fake apiserver, held by its pod sched-0."""
    url = await apiserver.start()
    configuration, _ = load_configuration(write_kubeconfig(tmp_path, url))
    client = KubeClient(configuration)
    record = LeaseRecord(
        "sched-0_4f1c", 15, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z", 0, ""
    )
    apiserver.apply("leases", lease_object(NAMESPACE, LEASE, record))
    yield KubeLeaseApi(client, NAMESPACE, LEASE, 5.0)
    await client.close()
