"""Outages: a silent watch is noticed and restarted while decisions go on; readiness fails only when
the state cannot be refreshed for longer than its limit; backoff after an outage stays short.

client-go's reflector (k8s.io/client-go tools/cache/reflector.go, v0.34) asks each watch for a random
timeoutSeconds and resumes from the last resourceVersion; kube-apiserver sends bookmarks about once a
minute (staging/src/k8s.io/apiserver/pkg/storage/cacher, bookmark frequency), so only a stream that
outlives its own timeout proves a dead path.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from limitguard.kube.livefeed import reflector_task_name
from limitguard.kube.reflector import Backoff, ReflectorSettings
from limitguard.testing.builders import make_node, make_pod
from limitguard.testing.clock import FakeClock
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import all_watching, eventually
from tests.integration.kube.outage_helpers import connect_driven


@pytest.fixture
async def driven(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[Callable[..., object]]:
    feeds = []

    async def start(**options: object):
        live, timer = await connect_driven(apiserver, tmp_path, **options)
        feeds.append(live.feed)
        return live, timer

    yield start
    for feed in feeds:
        await feed.stop()


def small_cluster(server: FakeApiServer) -> None:
    server.apply("nodes", make_node("node-a"))
    server.apply("pods", make_pod("team-a", "web-0", "node-a", cpu_limit="1"))


def test_the_default_stall_deadline_notices_a_dead_path_within_30_seconds() -> None:
    settings = ReflectorSettings()
    assert max(settings.watch_timeout_seconds) + settings.watch_stall_grace_seconds <= 30
    assert settings.backoff_max_seconds <= 5


def test_backoff_after_an_outage_is_capped_at_a_few_seconds_with_jitter() -> None:
    settings = ReflectorSettings()
    backoff = Backoff(settings.backoff_initial_seconds, settings.backoff_max_seconds, random.Random(7))
    delays = [backoff.next_delay() for _ in range(50)]
    assert max(delays) <= settings.backoff_max_seconds
    late = delays[10:]  # at the cap: uniform in [cap/2, cap], so replicas do not retry in step
    assert min(late) >= settings.backoff_max_seconds / 2
    assert len({round(delay, 6) for delay in late}) == len(late)


async def test_a_silent_watch_is_restarted_and_decisions_go_on_from_the_last_state(
    apiserver, driven, caplog
) -> None:
    small_cluster(apiserver)
    live, timer = await driven(clock=FakeClock(autojump=True))  # retries jump through their backoff
    await all_watching(apiserver)
    assert all(seconds <= 30 for _, seconds, _ in timer.armed)  # the deadline each stream got

    assert apiserver.silence_watches("pods") == 1  # the TCP path now drops every packet
    apiserver.apply("pods", make_pod("team-a", "web-1", "node-a", cpu_limit="2"))
    await eventually(lambda: apiserver.rv > live.resource_version("pods"), "a change not delivered")
    assert live.state.pod("team-a", "web-1") is None  # nothing arrives over the dead path
    assert live.state.ready  # decisions go on from the last state
    assert live.state.committed("node-a")["cpu"] == 1000

    with caplog.at_level(logging.WARNING, logger="limitguard.kube.reflector"):
        assert timer.fire("pods") == 1  # the stream outlived timeoutSeconds + grace
        await eventually(lambda: live.state.pod("team-a", "web-1") is not None, "resumed and caught up")
    assert live.state.committed("node-a")["cpu"] == 3000
    assert live.counter("limitguard_watch_stalls_total", kind="pods") == 1
    assert live.counter("limitguard_watch_stalls_total", kind="nodes") == 0
    assert live.counter("limitguard_relists_total", kind="pods") == 0  # resumed, not relisted
    assert any(record.getMessage().startswith("watch stalled") for record in caplog.records)
    assert live.state.ready


async def test_a_watch_whose_response_never_starts_is_restarted_by_the_same_deadline(
    apiserver, driven
) -> None:
    """The deadline runs from the request, as the server's timeoutSeconds does: a path that dies
    before the response's headers arrive is noticed too (it once ran only from the headers)."""
    small_cluster(apiserver)
    live, timer = await driven(clock=FakeClock(autojump=True))
    await all_watching(apiserver)
    apiserver.silence_next_watch("pods")
    seen = len(apiserver.requests)
    apiserver.close_watches()  # every kind resumes; the pods watch that follows never starts

    def pods_watches() -> int:
        return sum(1 for request in apiserver.requests[seen:] if request.kind == "pods" and request.watch)

    # Armed for the silent watch itself: before, only the client's read timeout (30 s of real time)
    # ended it, and a second watch got the deadline.
    await eventually(
        lambda: pods_watches() == 1 and apiserver.open_watches("pods") == 1 and timer.pending("pods") == 1,
        "the pods watch sent, silent, and its deadline armed",
    )
    apiserver.apply("pods", make_pod("team-a", "web-1", "node-a", cpu_limit="2"))
    assert live.state.pod("team-a", "web-1") is None

    assert timer.fire("pods") == 1 and pods_watches() == 1
    await eventually(lambda: live.state.pod("team-a", "web-1") is not None, "resumed and caught up")
    assert live.counter("limitguard_watch_stalls_total", kind="pods") == 1
    assert live.counter("limitguard_relists_total", kind="pods") == 0  # resumed, not relisted


async def test_readiness_fails_only_past_the_refresh_limit_and_returns_with_the_apiserver(
    apiserver, driven
) -> None:
    small_cluster(apiserver)
    live, timer = await driven()
    await all_watching(apiserver)
    limit = ReflectorSettings().unready_after_seconds

    apiserver.silence_watches("pods")
    apiserver.fail_next("pods", 1_000_000, 503)  # and every reconnect fails
    timer.fire("pods")
    # The pods reflector backs off (on the test's clock). Another kind's reflector may be backing off
    # too (its watch ended meanwhile): counting sleepers would advance the clock before pods sleeps.
    await live.clock.wait_for_sleeper(reflector_task_name("pods"))
    assert live.state.ready  # stale for less than the limit: still deciding

    seen = len(apiserver.requests)
    live.clock.advance(limit - 1)
    # Only the pods reconnect counts: another kind's watch may end and reconnect meanwhile.
    await eventually(
        lambda: any(request.kind == "pods" for request in apiserver.requests[seen:]), "a failed reconnect"
    )
    # backing off again, after judging its staleness
    await live.clock.wait_for_sleeper(reflector_task_name("pods"))
    assert live.state.ready

    live.clock.advance(2)  # now past the limit without one refresh
    await eventually(lambda: not live.state.ready, "marked not ready")

    apiserver.recover("pods")  # the apiserver is back
    live.clock.advance(1)
    await eventually(lambda: live.state.ready, "ready again at the next successful contact")
    assert live.counter("limitguard_relists_total", kind="pods") == 0  # the watch resumed
