"""The served webhook on top of the live feed: probes, metrics, and admissions that see fresh events."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from limitguard.admission.validating import Validator
from limitguard.core.configread import config_from_mapping
from limitguard.http.app import Services, create_app
from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import all_watching, eventually, within_hang_guard
from tests.support import REPO

DEMO_BINDING = REPO / "webhook" / "limitguard" / "demo" / "binding-pod5-node1.json"
CONFIG = config_from_mapping({"limitAware": {"defaultLimitToAllocatableRatio": {"cpu": 125}}})


def worked_example(server: FakeApiServer) -> None:
    """SPEC 2: node1 and node2 have 8 cpu at 125% (capacity 10); node1 holds 6 + 4, node2 3 + 2."""
    server.apply("namespaces", make_namespace("default"))
    server.apply("nodes", make_node("node1"))
    server.apply("nodes", make_node("node2"))
    for name, node, cpu in (
        ("pod1", "node1", "6"),
        ("pod2", "node1", "4"),
        ("pod3", "node2", "3"),
        ("pod4", "node2", "2"),
    ):
        server.apply("pods", make_pod("default", name, node, cpu_limit=cpu))
    pod5 = make_pod(
        "default", "pod5", "", cpu_limit="4", phase="Pending", uid="00000000-0000-0000-0000-000000000005"
    )
    server.apply("pods", pod5)


def binding_review(node: str, uid: str) -> bytes:
    review: dict[str, Any] = copy.deepcopy(orjson.loads(DEMO_BINDING.read_bytes()))
    review["request"]["uid"] = uid
    review["request"]["object"]["target"]["name"] = node
    return orjson.dumps(review)


async def serve(aiohttp_client: Any, live: Any) -> Any:
    services = Services(live.state, CONFIG, {"validate": Validator(live.state, CONFIG)}, live.metrics)
    return await aiohttp_client(create_app(services))


async def bind(client: Any, node: str, uid: str) -> dict[str, Any]:
    answer = await client.post(
        "/validate", data=binding_review(node, uid), headers={"Content-Type": "application/json"}
    )
    assert answer.status == 200
    return (await answer.json())["response"]


async def test_admission_right_after_a_modified_event_sees_it(apiserver, connect, aiohttp_client) -> None:
    worked_example(apiserver)
    live = await connect()
    client = await serve(aiohttp_client, live)

    denied = await bind(client, "node1", "review-1")
    assert denied["allowed"] is False
    assert "cpu limit 4 exceeds remaining 0" in denied["status"]["message"]

    rv = apiserver.apply("pods", make_pod("default", "pod2", "node1", cpu_limit="4", phase="Succeeded"))
    await live.applied("pods", rv)
    allowed = await bind(client, "node1", "review-2")
    assert allowed["allowed"] is True

    # The approved binding is in the ledger; the node grows and the pod shows up bound there.
    rv = apiserver.apply("nodes", make_node("node1", cpu="4"))  # capacity 5 < 6 + 4
    await live.applied("nodes", rv)
    live.state.ledger.release("default/pod5")
    assert (await bind(client, "node1", "review-3"))["allowed"] is False


async def test_readyz_follows_the_sync_and_healthz_does_not(apiserver, connect, aiohttp_client) -> None:
    worked_example(apiserver)
    held = apiserver.gate("pods")
    live = await connect(wait_ready=False)
    client = await serve(aiohttp_client, live)

    assert (await client.get("/readyz")).status == 503
    assert (await client.get("/healthz")).status == 200
    held.set()
    await eventually(lambda: live.state.ready, "state ready")
    assert (await client.get("/readyz")).status == 200


async def test_metrics_endpoint_reports_the_feed(apiserver, connect, aiohttp_client) -> None:
    worked_example(apiserver)
    live = await connect()
    client = await serve(aiohttp_client, live)
    await all_watching(apiserver)

    reconnect = live.hold_retries()
    apiserver.close_watches()
    await eventually(lambda: not apiserver.watchers, "watches closed")
    rv = apiserver.apply("pods", make_pod("default", "pod6", "node2", cpu_limit="1"))
    apiserver.compact()
    reconnect.set()
    await live.applied("pods", rv)
    await eventually(lambda: live.state.ready, "ready after the relist")

    text = (await (await client.get("/metrics")).read()).decode()
    assert 'limitguard_relists_total{kind="pods"} 1.0' in text
    assert 'limitguard_watch_restarts_total{kind="pods"} 1.0' in text  # the resume that met 410
    assert 'limitguard_state_objects{kind="pods"} 6.0' in text
    assert "limitguard_state_ready 1.0" in text


async def test_an_admission_is_answered_while_a_burst_is_half_applied(
    apiserver, connect, aiohttp_client
) -> None:
    """The request path never waits for the feed: with the watch stopped mid-burst, an admission is
    answered from the cache as it stands between the burst's first and last event, and sees it."""
    worked_example(apiserver)
    for index in range(20):
        apiserver.apply("nodes", make_node(f"spare-{index}"))
    live = await connect()
    client = await serve(aiohttp_client, live)
    await all_watching(apiserver)
    held_at = 1500
    pause = apiserver.pause_watch("pods", after_events=held_at)

    first_rv = last_rv = 0
    for index in range(3000):  # queued to the open watch in one go: a burst
        if index == held_at - 1:  # the last event before the pause fills node2 (5 + 4 of 10 cpu)
            pod = make_pod("default", "hog", "node2", cpu_limit="4")
        elif index == 2999:  # the burst's last event: the hog finishes and leaves node2
            pod = make_pod("default", "hog", "node2", cpu_limit="4", phase="Succeeded")
        else:
            pod = make_pod("default", f"burst-{index}", f"spare-{index % 20}", cpu_limit="10m")
        last_rv = apiserver.apply("pods", pod)
        first_rv = first_rv or last_rv
    held_rv = first_rv + held_at - 1

    await within_hang_guard(pause.holding.wait(), "the watch paused mid-burst")
    await live.applied("pods", held_rv)
    during = await bind(client, "node2", "during-burst")
    assert first_rv < live.resource_version("pods") == held_rv < last_rv  # answered mid-burst ...
    assert during["allowed"] is False  # ... from the cache as it stood there: the hog is counted
    assert "allocated 9 of capacity 10" in during["status"]["message"]

    pause.release()
    await live.applied("pods", last_rv)
    assert live.state.counts()["pods"] == 5 + 2998  # the worked example, the burst, no hog
    after = await bind(client, "node2", "after-burst")
    assert after["allowed"] is True
