"""Faults seen from the admission side (issue 7): what limitguard answers while its state is known
to be incomplete, and why an apiserver outage never makes it over-admit."""

from __future__ import annotations

import pytest

from limitguard.admission.validating import Validator
from limitguard.core.configread import config_from_mapping
from limitguard.http.app import Services, create_app
from limitguard.state.ledger import BindingLedger
from limitguard.testing.builders import make_pod
from tests.integration.kube.helpers import all_watching, eventually
from tests.integration.kube.test_live_admission import worked_example
from tests.support import binding


def config(while_not_ready: str = "Allow"):
    return config_from_mapping(
        {"limitAware": {"defaultLimitToAllocatableRatio": {"cpu": 125}}, "whileNotReady": while_not_ready}
    )


async def serve(aiohttp_client, live, while_not_ready: str = "Allow"):
    chosen = config(while_not_ready)
    services = Services(live.state, chosen, {"validate": Validator(live.state, chosen)}, live.metrics)
    return await aiohttp_client(create_app(services))


async def bind(client, pod: str, node: str, uid: str) -> dict:
    answer = await client.post("/validate", json=binding(pod, node, uid=uid))
    assert answer.status == 200
    return (await answer.json())["response"]


@pytest.mark.parametrize("policy", ["Allow", "Deny"])
async def test_while_relisting_answers_are_checked_on_the_last_state(
    apiserver, connect, aiohttp_client, policy
):
    """After 410 Gone the relist keeps the replica ready: bindings are judged on the last consistent
    state (client-go's informers keep serving their store until Replace), never "not checked"."""
    worked_example(apiserver)
    live = await connect()
    client = await serve(aiohttp_client, live, policy)
    assert (await bind(client, "pod5", "node1", "before"))["allowed"] is False  # node1 is full
    await all_watching(apiserver)

    reconnect = live.hold_retries()
    held_list = apiserver.gate("pods")
    apiserver.close_watches()
    await eventually(lambda: not apiserver.watchers, "watches closed")
    apiserver.apply("pods", make_pod("default", "pod4", "node2", cpu_limit="1"))  # history moves on ...
    apiserver.compact()  # ... and is compacted past our resourceVersion: 410, then a held relist
    reconnect.set()
    await eventually(lambda: apiserver.gate_waiting("pods"), "the pods relist held")

    assert live.state.ready
    during = await bind(client, "pod5", "node1", "during")
    assert during["allowed"] is False and during["status"]["code"] == 403
    assert "cpu limit 4 exceeds remaining 0" in during["status"]["message"]

    held_list.set()
    await eventually(lambda: live.counter("limitguard_relists_total", kind="pods") == 1, "relisted")
    after = await bind(client, "pod5", "node1", "after")
    assert after["allowed"] is False and after["status"]["code"] == 403


@pytest.mark.parametrize("policy", ["Allow", "Deny"])
async def test_before_the_first_sync(apiserver, connect, aiohttp_client, policy):
    worked_example(apiserver)
    held_list = apiserver.gate("pods")
    live = await connect(wait_ready=False)
    client = await serve(aiohttp_client, live, policy)
    await eventually(lambda: live.state.node("node1") is not None, "nodes listed")
    answer = await bind(client, "pod5", "node1", "early")
    assert answer["allowed"] is (policy == "Allow")
    if policy == "Deny":
        assert answer["status"]["code"] == 503
    held_list.set()
    await eventually(lambda: live.state.ready, "synced")


async def test_an_outage_longer_than_the_ledger_ttl_does_not_over_admit(apiserver, connect, aiohttp_client):
    worked_example(apiserver)
    apiserver.apply("pods", make_pod("default", "pod6", "", cpu_limit="3", phase="Pending"))
    live = await connect()
    live.state.ledger = BindingLedger(ttl_seconds=30, clock=live.clock)
    live.state.ledger.caught_up()
    client = await serve(aiohttp_client, live)
    await all_watching(apiserver)

    assert (await bind(client, "pod5", "node2", "first"))["allowed"] is True  # node2: 5 + 4 = 9 of 10

    reconnect = live.hold_retries()  # the apiserver goes away
    apiserver.close_watches()
    await eventually(lambda: not apiserver.watchers, "watches closed")
    apiserver.apply("pods", make_pod("default", "pod5", "node2", cpu_limit="4"))  # the bind happened, unseen
    live.clock.advance(31)  # the outage outlasts the ledger's TTL

    assert live.state.ready  # known to be stale, not known to be incomplete
    second = await bind(client, "pod6", "node2", "second")
    assert second["allowed"] is False  # 9 + 3 > 10: pod5's entry is still counted
    assert "allocated 9 of capacity 10" in second["status"]["message"]

    reconnect.set()  # the apiserver is back; the cache shows pod5 bound
    await eventually(lambda: live.state.pod("default", "pod5").node_name == "node2", "pod5 seen bound")
    assert len(live.state.ledger) == 0
    assert live.state.committed("node2")["cpu"] == 9000
    assert (await bind(client, "pod6", "node2", "third"))["allowed"] is False
