"""The state converges after every kind of fault the API server can throw at a watch."""

from __future__ import annotations

import dataclasses

from limitguard.clock import Clock
from limitguard.testing.builders import make_node, make_pod
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import FAST, all_watching, eventually, within_hang_guard
from tests.integration.kube.test_live_sync import small_cluster


class RecordedSleeps:
    """A clock that notes every backoff it is asked for (then sleeps on the clock it wraps)."""

    def __init__(self, inner: Clock, delays: list[float]) -> None:
        self.inner = inner
        self.delays = delays

    def now(self) -> float:
        return self.inner.now()

    async def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)
        await self.inner.sleep(seconds)


def pods_on(server: FakeApiServer, node: str) -> int:
    """Active pods the server holds on *node* (what the cache must converge to)."""
    return sum(
        1
        for stored in server.objects["pods"].values()
        if stored.fields["spec.nodeName"] == node
        and stored.fields["status.phase"] not in ("Succeeded", "Failed")
    )


def watch_requests(server: FakeApiServer, kind: str) -> list[dict[str, str]]:
    return [seen.params for seen in server.requests if seen.kind == kind and seen.watch]


def list_requests(server: FakeApiServer, kind: str) -> int:
    return sum(1 for seen in server.requests if seen.kind == kind and not seen.watch)


async def test_clean_stream_end_resumes_from_the_last_resource_version(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    reflector = live.feed.reflectors["pods"]
    reconnect = live.hold_retries()
    await all_watching(apiserver)
    last_applied = reflector.resource_version

    apiserver.close_watches()
    await eventually(lambda: apiserver.open_watches("pods") == 0, "pods watch closed")
    rv = apiserver.apply("pods", make_pod("team-a", "web-9", "node-a", cpu_limit="2"))  # while away
    assert live.state.pod("team-a", "web-9") is None
    reconnect.set()
    await live.applied("pods", rv)

    assert watch_requests(apiserver, "pods")[-1]["resourceVersion"] == last_applied
    assert list_requests(apiserver, "pods") == 3  # resumed, not relisted
    assert live.state.ready
    assert live.state.committed("node-a")["cpu"] == 5000
    assert live.counter("limitguard_watch_restarts_total", kind="pods") == 1
    assert live.counter("limitguard_relists_total", kind="pods") == 0


async def test_connection_cut_mid_event_loses_nothing(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    await all_watching(apiserver)

    reconnect = live.hold_retries()
    apiserver.close_watches(abort=True)  # half an event, then the connection drops
    await eventually(lambda: not apiserver.watchers, "watches cut")
    for index in range(5):
        rv = apiserver.apply("pods", make_pod("team-c", f"idle-{index}", "node-d", cpu_limit="1"))
    reconnect.set()
    await live.applied("pods", rv)

    assert live.state.committed("node-c").get("cpu", 0) == 0
    assert live.state.committed("node-d")["cpu"] == 5000
    assert sum(1 for pod in live.state.pods() if pod.node_name == "node-d") == pods_on(apiserver, "node-d")
    assert list_requests(apiserver, "pods") == 3
    assert live.state.ready


async def test_gone_after_compaction_relists_and_removes_what_vanished(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    await all_watching(apiserver)
    reconnect = live.hold_retries()
    held = apiserver.gate("pods")

    # While the watch is away: changes, then history compacted past our resourceVersion.
    apiserver.close_watches()
    await eventually(lambda: not apiserver.watchers, "watches closed")
    apiserver.delete("pods", "team-a/web-1")
    apiserver.apply("pods", make_pod("team-b", "db-1", "node-b", cpu_limit="3", phase="Succeeded"))
    apiserver.apply("pods", make_pod("team-b", "db-2", "node-b", cpu_limit="7"))
    apiserver.delete("nodes", "node-d")
    apiserver.compact()

    reconnect.set()
    await eventually(lambda: apiserver.gate_waiting("pods"), "the pods relist held")
    assert live.state.ready  # a relist decides on the last state, as client-go serves its store
    assert live.state.pod("team-a", "web-1") is not None  # stale until the relist completes
    held.set()
    await eventually(lambda: live.counter("limitguard_relists_total", kind="pods") == 1, "relisted")
    await eventually(lambda: live.state.pod("team-a", "web-1") is None, "the vanished pod removed")

    assert live.state.pod("team-a", "web-1") is None
    assert live.state.pod("team-b", "db-1") is None
    assert live.state.committed("node-a")["cpu"] == 2000
    assert live.state.committed("node-b")["cpu"] == 7000
    assert live.state.node("node-d") is None
    assert live.counter("limitguard_relists_total", kind="pods") == 1
    assert live.counter("limitguard_relists_total", kind="nodes") == 1


async def test_gone_as_an_http_410_also_relists(apiserver, connect) -> None:
    apiserver.watch_gone_as_http = True
    small_cluster(apiserver)
    live = await connect()
    await all_watching(apiserver)

    reconnect = live.hold_retries()
    apiserver.close_watches()
    await eventually(lambda: not apiserver.watchers, "watches closed")
    apiserver.apply("nodes", make_node("node-a", cpu="64"))
    apiserver.compact()
    reconnect.set()

    await eventually(lambda: live.counter("limitguard_relists_total", kind="nodes") == 1, "nodes relisted")
    await eventually(lambda: live.state.ready, "ready after the relist")
    assert live.state.node("node-a").allocatable["cpu"] == 64000


async def test_error_event_and_server_errors_back_off_then_converge(apiserver, connect) -> None:
    small_cluster(apiserver)
    delays: list[float] = []

    live = await connect()
    reflector = live.feed.reflectors["pods"]
    reflector.clock = RecordedSleeps(reflector.clock, delays)
    await all_watching(apiserver)
    apiserver.fail_next("pods", count=4, status=500)
    apiserver.send_error(500, reason="InternalError")  # a non-410 ERROR event: restart, no relist
    rv = apiserver.apply("pods", make_pod("team-a", "web-7", "node-a", cpu_limit="1"))

    await live.applied("pods", rv)
    assert live.state.committed("node-a")["cpu"] == 4000
    assert list_requests(apiserver, "pods") == 3
    assert len(delays) >= 5  # the ERROR event, then four 500s
    ceilings = [
        min(FAST.backoff_max_seconds, FAST.backoff_initial_seconds * 2**n) for n in range(len(delays))
    ]
    assert all(ceiling / 2 <= delay <= ceiling for delay, ceiling in zip(delays, ceilings, strict=True))
    assert len(set(delays)) > 1  # jittered


async def test_continue_token_expiring_mid_list_restarts_the_list(apiserver, connect) -> None:
    small_cluster(apiserver)
    pages: list[int] = []

    def compact_after_first_page(kind: str, items: int) -> None:
        if kind == "pods":
            pages.append(items)
            if len(pages) == 1:
                apiserver.delete("pods", "team-c/idle-2")  # lands between page 1 and the retried list
                apiserver.compact()

    apiserver.after_page = compact_after_first_page
    live = await connect()

    assert live.state.pod("team-c", "idle-2") is None
    assert live.state.counts()["pods"] == 6
    assert live.state.committed("node-c")["cpu"] == 200
    pod_lists = [seen.params for seen in apiserver.requests if seen.kind == "pods" and not seen.watch]
    fresh_starts = [index for index, params in enumerate(pod_lists) if "continue" not in params]
    assert fresh_starts == [0, 2]  # page 1, its continue answered 410, then a new list from scratch
    assert pages == [3, 3, 3]  # 1 page of the expired list + 2 of the new one (6 active pods)


async def test_unauthorized_retries_until_the_token_works(apiserver, connect) -> None:
    small_cluster(apiserver)
    apiserver.token = "not-yet"
    live = await connect(wait_ready=False)
    await eventually(lambda: list_requests(apiserver, "nodes") >= 2, "retried after 401")
    assert not live.state.ready
    apiserver.token = "test-token"
    await eventually(lambda: live.state.ready, "ready once authorized")


async def test_stop_cancels_open_watches_and_a_hung_list(apiserver, connect) -> None:
    small_cluster(apiserver)
    # The client would give up on the list only after an hour: stop() must not wait for that.
    patient = dataclasses.replace(FAST, list_timeout_seconds=3600.0)
    never = apiserver.gate("pods")  # the pods list never answers
    live = await connect(settings=patient, wait_ready=False)
    await eventually(lambda: apiserver.open_watches("nodes") == 1, "nodes watch open")
    await eventually(lambda: list_requests(apiserver, "pods") == 1, "pods list sent")
    tasks = {task.get_name(): task for task in live.feed._tasks}

    await within_hang_guard(live.feed.stop(), "stop() with a hung list")
    assert not never.is_set() and list_requests(apiserver, "pods") == 1  # the list never came back
    assert all(task.cancelled() for task in tasks.values())  # cancelled, not timed out or failed
    assert set(tasks) == {"reflector-nodes", "reflector-pods", "reflector-namespaces"}
    assert live.feed.client.closed
    await eventually(lambda: apiserver.open_watches("nodes") == 0, "server saw the watch go")
