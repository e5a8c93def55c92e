"""Ledger entries the apiserver never wrote are released; entries it wrote are kept until seen.

Validating webhooks are called in parallel (k8s.io/apiserver pkg/admission/plugin/webhook/validating
dispatcher.go), so a write can land up to the slowest one's timeout after limitguard answered; past
that horizon, a consistent read (a `limit=1` list: the apiserver's current resourceVersion, as
client-go's consistent reads do) fences the entry.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from limitguard.admission.validating import Validator
from limitguard.http.app import Services, create_app
from limitguard.kube.client import ApiError
from limitguard.testing.builders import make_namespace, make_pod, pod_create
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import TOKEN, all_watching, eventually
from tests.integration.kube.outage_helpers import connect_driven
from tests.integration.kube.test_live_admission import worked_example
from tests.integration.kube.test_live_not_ready import bind, config

HORIZON = 10.0


@pytest.fixture
async def quiet_apiserver() -> AsyncIterator[FakeApiServer]:
    """Bookmarks once an hour: an idle pod watch does not move past a fence by itself."""
    server = FakeApiServer(token=TOKEN, bookmark_interval=3600)
    yield server
    await server.stop()


@pytest.fixture
async def served(tmp_path: Path, aiohttp_client) -> AsyncIterator[Callable[..., object]]:
    feeds = []

    async def start(server: FakeApiServer):
        worked_example(server)
        live, _ = await connect_driven(server, tmp_path, horizon=HORIZON)
        feeds.append(live.feed)
        chosen = config()
        services = Services(live.state, chosen, {"validate": Validator(live.state, chosen)}, live.metrics)
        client = await aiohttp_client(create_app(services))
        await all_watching(server)
        return live, client

    yield start
    for feed in feeds:
        await feed.stop()


def forged_daemonset_pod(node: str) -> dict:
    """A pod CREATE naming a node, owned by a DaemonSet (exempt, so allowed) and with a huge limit."""
    forged = make_pod("default", "forged", node, cpu_limit="100000", phase="Pending")
    forged["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "x", "uid": "u", "controller": True}
    ]
    return pod_create(forged, uid="forged-review")


async def send_forgery(client, live) -> None:
    answer = await client.post("/validate", json=forged_daemonset_pod("node2"))
    assert (await answer.json())["response"]["allowed"] is True
    assert live.state.ledger.holding("default/forged", "node2")["cpu"] == 100_000_000
    denied = await bind(client, "pod5", "node2", "while-held")  # the forgery holds node2's room
    assert denied["allowed"] is False


@pytest.mark.parametrize("bookmarks", [True, False], ids=["watch-passes-fence", "idle-watch-node-read"])
async def test_a_forged_review_holds_room_only_until_the_horizon_and_the_release_is_logged(
    apiserver, quiet_apiserver, served, caplog, bookmarks
) -> None:
    server = apiserver if bookmarks else quiet_apiserver
    live, client = await served(server)
    await send_forgery(client, live)

    live.clock.advance(HORIZON - 1)
    assert await live.feed.releaser.round() == []  # the apiserver could still write it
    assert len(live.state.ledger) == 1

    live.clock.advance(1)  # past the horizon: nothing can write it any more
    server.apply("namespaces", make_namespace("elsewhere"))  # the apiserver's version moves on
    with caplog.at_level(logging.WARNING, logger="limitguard.kube.unwritten"):
        released = await live.feed.releaser.round()  # fences it with a limit=1 list
        if bookmarks:
            await eventually(lambda: live.resource_version("pods") >= server.rv, "a bookmark past the fence")
        else:
            live.clock.advance(2)  # the idle watch has not reached the fence: read the node
        released += await live.feed.releaser.round()
    assert [(entry.pod_key, entry.node) for entry in released] == [("default/forged", "node2")]
    assert len(live.state.ledger) == 0
    (record,) = [r for r in caplog.records if r.getMessage().startswith("ledger entry released")]
    assert (record.pod, record.node, record.caller.split(":")[0]) == ("default/forged", "node2", "127.0.0.1")
    assert live.counter("limitguard_ledger_unwritten_released_total", hold="binding") == 1
    assert any(request.params.get("limit") == "1" for request in server.requests)
    assert (await bind(client, "pod5", "node2", "after"))["allowed"] is True


async def test_a_binding_the_apiserver_wrote_keeps_its_room_until_the_watch_shows_it(
    quiet_apiserver, served
) -> None:
    server = quiet_apiserver
    live, client = await served(server)
    server.apply("pods", make_pod("default", "pod6", "", cpu_limit="3", phase="Pending"))
    await eventually(lambda: live.state.pod("default", "pod6") is not None, "pod6 cached")
    assert (await bind(client, "pod5", "node2", "first"))["allowed"] is True  # 5 + 4 = 9 of 10

    pause = server.pause_watch("pods", after_events=0)  # the watch lags: the bind is not seen yet
    server.apply("pods", make_pod("default", "pod5", "node2", cpu_limit="4"))  # the apiserver wrote it
    live.clock.advance(HORIZON + 3)
    assert await live.feed.releaser.round() == []  # fenced
    live.clock.advance(3)
    assert await live.feed.releaser.round() == []  # the node read lists pod5: written, kept
    assert live.state.allocated("node2")["cpu"] == 9000
    assert (await bind(client, "pod6", "node2", "second"))["allowed"] is False  # 9 + 3 > 10

    pause.release()
    await eventually(lambda: live.state.pod("default", "pod5").node_name == "node2", "pod5 seen bound")
    assert len(live.state.ledger) == 0
    assert live.state.allocated("node2")["cpu"] == 9000
    assert live.counter("limitguard_ledger_unwritten_released_total", hold="binding") == 0


async def test_a_retried_binding_is_counted_once_on_the_live_state(apiserver, served) -> None:
    """kube-scheduler 1.37 retries a bind after a transient error (kubernetes PR #138855)."""
    live, client = await served(apiserver)
    assert (await bind(client, "pod5", "node2", "try-1"))["allowed"] is True
    assert (await bind(client, "pod5", "node2", "try-2"))["allowed"] is True  # not 13 of 10
    assert live.state.allocated("node2")["cpu"] == 9000


async def test_an_apiserver_that_cannot_be_read_releases_nothing(quiet_apiserver, served) -> None:
    apiserver = quiet_apiserver
    live, client = await served(apiserver)
    await send_forgery(client, live)
    live.clock.advance(HORIZON + 1)
    apiserver.fail_next("pods", 1, 503)  # the fence read fails: no release on a guess
    with pytest.raises(ApiError):
        await live.feed.releaser.round()
    assert len(live.state.ledger) == 1
    apiserver.apply("namespaces", make_namespace("elsewhere"))
    live.clock.advance(3)
    assert await live.feed.releaser.round() == []  # fenced now; the watch has not passed it yet
    live.clock.advance(3)
    released = await live.feed.releaser.round()  # past the grace: the node read settles it
    assert [entry.pod_key for entry in released] == ["default/forged"]
