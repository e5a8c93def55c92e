"""The live feed: list/watch of Nodes, Pods and Namespaces into the ClusterState.

Nothing here decides anything; it only keeps the state equal to the cluster, so the request path
never calls the API server. Pods are watched with the apiserver-side selector that drops terminal
phases, so a pod that reaches Succeeded/Failed arrives as DELETED and leaves its node's sum.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable

from limitguard.clock import Clock, SystemClock
from limitguard.kube.client import KubeClient, load_configuration
from limitguard.kube.listwatch import KindSink, ReflectorSettings, WatchMetrics
from limitguard.kube.reflector import Reflector
from limitguard.kube.release import ReconnectNotifyingClient, ReleaseFollower
from limitguard.kube.unwritten import UnwrittenReleaser, UnwrittenSettings
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

ACTIVE_PODS_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


def state_sinks(state: ClusterState) -> dict[str, KindSink]:
    """Adapters from the reflector's per-kind operations to the state's calls.

    Each listed page, and the state once complete, is moved out of the cyclic GC's reach
    (`gc.freeze()`): with 150,000 pod records every gen-2 collection would walk them all, which
    makes a sync quadratic and stops the event loop for hundreds of milliseconds mid-admission.
    Records hold no reference cycles, so reference counting still frees them when a pod goes.
    """

    def remove_node(name: str) -> None:
        state.delete_node({"metadata": {"name": name}})

    def remove_namespace(name: str) -> None:
        state.delete_namespace({"metadata": {"name": name}})

    def synced(kind: str) -> Callable[[bool], None]:
        def mark(value: bool) -> None:
            state.mark_synced(kind, value)
            if value and state.ready:
                gc.freeze()

        return mark

    return {
        "nodes": KindSink(
            upsert=lambda obj: state.upsert_node(obj).name,
            delete=state.delete_node,
            held_keys=lambda: state.keys("nodes"),
            remove=remove_node,
            mark_synced=synced("nodes"),
            page_applied=gc.freeze,
        ),
        "pods": KindSink(
            upsert=lambda obj: state.upsert_pod(obj).key,
            delete=state.delete_pod,
            held_keys=lambda: state.keys("pods"),
            remove=state.remove_pod,
            mark_synced=synced("pods"),
            page_applied=gc.freeze,
            caught_up=lambda: state.ledger.caught_up(),  # the ledger may be replaced (tests)
        ),
        "namespaces": KindSink(
            upsert=lambda obj: state.upsert_namespace(obj).name,
            delete=state.delete_namespace,
            held_keys=lambda: state.keys("namespaces"),
            remove=remove_namespace,
            mark_synced=synced("namespaces"),
            page_applied=gc.freeze,
        ),
    }


def build_reflectors(
    client: KubeClient,
    state: ClusterState,
    settings: ReflectorSettings | None = None,
    clock: Clock | None = None,
    stall_sleep: Callable[[float], Awaitable[None]] | None = None,
) -> dict[str, Reflector]:
    sinks = state_sinks(state)
    paths = {"nodes": "/api/v1/nodes", "pods": "/api/v1/pods", "namespaces": "/api/v1/namespaces"}
    selectors = {"pods": ACTIVE_PODS_SELECTOR}
    return {
        kind: Reflector(
            client,
            kind,
            path,
            sinks[kind],
            settings=settings,
            field_selector=selectors.get(kind),
            clock=clock,
            stall_sleep=stall_sleep,
        )
        for kind, path in paths.items()
    }


def reflector_task_name(kind: str) -> str:
    """The name of the task that runs *kind*'s reflector (tests wait for its sleeps by it)."""
    return f"reflector-{kind}"


class LiveFeed:
    """Three reflector tasks sharing one HTTP session, and the task that releases ledger entries
    the apiserver never wrote; readiness comes from the state, not from here."""

    def __init__(
        self,
        client: KubeClient,
        reflectors: dict[str, Reflector],
        releaser: UnwrittenReleaser | None = None,
    ) -> None:
        self.client = client
        self.reflectors = reflectors
        self.release: ReleaseFollower | None = None  # set when /version decides the pod rules
        self.releaser = releaser
        self._metrics: WatchMetrics | None = None
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def metrics(self) -> WatchMetrics | None:
        return self._metrics

    @metrics.setter
    def metrics(self, metrics: WatchMetrics | None) -> None:
        self._metrics = metrics
        for reflector in self.reflectors.values():
            reflector.metrics = metrics
        if self.releaser is not None:
            self.releaser.metrics = metrics  # type: ignore[assignment]  # Metrics has ledger_unwritten

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(reflector.run(), name=reflector_task_name(kind))
            for kind, reflector in self.reflectors.items()
        ]
        if self.releaser is not None:
            self._tasks.append(asyncio.create_task(self.releaser.run(), name="ledger-unwritten"))

    async def stop(self) -> None:
        """Cancel the watches and close the session; safe to call twice."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self.release is not None:
            await self.release.stop()
        await self.client.close()


async def start_live_feed(
    state: ClusterState,
    kubeconfig: str | None,
    *,
    settings: ReflectorSettings | None = None,
    token_refresh_seconds: float = 30.0,
    follow_release: bool = False,
    clock: Clock | None = None,
    unwritten: UnwrittenSettings | None = None,
    stall_sleep: Callable[[float], Awaitable[None]] | None = None,
    context: str | None = None,
) -> LiveFeed:
    """Connect and start the list/watch tasks; returns at once (the sync shows up in `state.ready`).

    *clock* times backoffs, slices and token refreshes; give the state's ledger the same one.
    *stall_sleep* times the silent-watch deadline (the event loop's sleep unless a test drives it).
    With *unwritten*, ledger entries the apiserver never wrote are released (limitguard.kube.unwritten).
    *context* chooses a kubeconfig context (`--context`, as kubectl's).
    """
    clock = clock or SystemClock()
    configuration, source = await asyncio.to_thread(load_configuration, kubeconfig, None, context)
    client = KubeClient(configuration, token_refresh_seconds, clock)
    reflectors = build_reflectors(client, state, settings, clock, stall_sleep)
    releaser = None
    if unwritten is not None:
        releaser = UnwrittenReleaser(client, lambda: state.ledger, reflectors["pods"], clock, unwritten)
    feed = LiveFeed(client, reflectors, releaser)
    if follow_release:  # /version decides the pod rules: before the first list, and on each reconnect
        feed.release = ReleaseFollower(
            client, state, lambda _release: feed.reflectors["pods"].request_relist()
        )
        await feed.release.check()
        pods = feed.reflectors["pods"]
        pods.client = ReconnectNotifyingClient(pods.client, feed.release)
    feed.start()
    log.info("watching the cluster", extra={"server": client.base_url, "credentials": source})
    return feed
