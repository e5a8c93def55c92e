"""The served webhook on top of the live feed: probes, metrics, and admissions that see fresh events."""

from __future__ import annotations

import copy
import time
from typing import Any

import orjson

from limitguard.testing.fakeapiserver import FakeApiServer, make_namespace, make_node, make_pod
from tests.integration.kube.helpers import all_watching, eventually
from limitguard.admission.validating import Validator
from limitguard.core.config import config_from_mapping
from limitguard.http.app import Services, create_app
from tests.support import REPO

DEMO_BINDING = REPO / "webhook" / "demo" / "binding-pod5-node1.json"
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


async def test_admissions_keep_flowing_during_a_burst_of_events(apiserver, connect, aiohttp_client) -> None:
    worked_example(apiserver)
    for index in range(20):
        apiserver.apply("nodes", make_node(f"spare-{index}"))
    live = await connect()
    client = await serve(aiohttp_client, live)
    await all_watching(apiserver)

    for index in range(3000):  # queued to the open watch in one go: a burst
        rv = apiserver.apply(
            "pods", make_pod("default", f"burst-{index}", f"spare-{index % 20}", cpu_limit="10m")
        )
    latencies = []
    while live.resource_version("pods") < rv:
        started = time.perf_counter()
        await bind(client, "node2", f"during-burst-{len(latencies)}")
        latencies.append(time.perf_counter() - started)
        assert len(latencies) < 10_000, "the burst never finished"
    assert live.state.counts()["pods"] == 3005
    assert len(latencies) >= 3, "admissions waited for the whole burst"
    assert max(latencies) < 0.5
