"""Events for transitions, grouped into series as client-go's tools/events does, and the one rate
limit of cluster writes holding for reports and events together."""

from __future__ import annotations

import json
from collections.abc import Callable

from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.kube.reports.events import FINISH_SECONDS
from limitguard.testing.builders import node, pod
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import Connected
from tests.integration.kube.reports_helpers import install_crds, keeping, reports_config, stored_reports
from tests.support import container

Connect = Callable[..., object]


def node_with_ratio(percent: int) -> dict:
    return node("n1", cpu="4", uid="uid-n1", annotations={RATIO_ANNOTATION: json.dumps({"cpu": percent})})


async def test_a_flapping_node_makes_one_series_per_reason(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    apiserver.apply("nodes", node_with_ratio(200))
    apiserver.apply("pods", pod("a", node_name="n1", containers=[container("c", limits={"cpu": "6"})]))
    config = reports_config(events=True, reports=False)
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config)
    await keeper.settle()  # the first pass is the baseline: no event
    assert apiserver.events() == []

    async def ratio(percent: int) -> None:
        apiserver.apply("nodes", node_with_ratio(percent))
        await connected.applied("nodes", apiserver.rv)
        await keeper.settle()

    await ratio(100)  # over: LimitRatioExceeded
    await ratio(200)  # within: LimitRatioRestored
    await ratio(100)  # over again: the first event becomes a series of 2 (a patch, no new event)
    await ratio(200)
    await ratio(100)  # a third time: counted, written when the series is refreshed or finished
    events = apiserver.events()
    assert [(e["reason"], e["type"], e.get("series", {}).get("count")) for e in events] == [
        ("LimitRatioExceeded", "Warning", 2),
        ("LimitRatioRestored", "Normal", 2),
    ]
    exceeded = events[0]
    assert exceeded["metadata"]["namespace"] == "default"  # a Node's events go to default
    assert exceeded["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-n1"}
    assert exceeded["reportingController"] == "limitguard.io/limitguard"
    assert exceeded["note"].startswith("cpu limits 6 exceed capacity 4 by 2")

    # Quiet for client-go's finish time: each series is written once more with its final count.
    connected.clock.advance(FINISH_SECONDS + 1)
    await keeper.settle()
    assert [e["series"]["count"] for e in apiserver.events()] == [3, 2]
    assert keeper.keeper.recorder.open_series() == 0  # type: ignore[union-attr]


async def test_reports_and_events_share_the_one_rate_limit(
    apiserver: FakeApiServer, connect: Connect
) -> None:
    install_crds(apiserver)
    for index in range(30):
        apiserver.apply("nodes", node(f"n{index:02d}", cpu="4", uid=f"uid-{index}"))
        apiserver.apply(
            "pods",
            pod(f"p{index}", node_name=f"n{index:02d}", containers=[container("c", limits={"cpu": "1"})]),
        )
    config = reports_config(ratios={"cpu": 200}, events=True)
    connected: Connected = await connect(config=config)  # type: ignore[assignment]
    keeper = keeping(connected, config, max_per_second=5, burst=10)
    await keeper.settle()  # 30 reports: 10 at once, then 5 a second
    assert len(stored_reports(apiserver)) == 30
    assert keeper.writes.deferred["report"] == 20

    # Every node goes over its ratio at once: 30 report updates and 30 events, one bucket.
    for index in range(30):
        apiserver.apply(
            "nodes",
            node(f"n{index:02d}", cpu="4", uid=f"uid-{index}", annotations={RATIO_ANNOTATION: '{"cpu": 20}'}),
        )
    await connected.applied("nodes", apiserver.rv)
    started = connected.clock.now()
    await keeper.settle()
    assert len(apiserver.events()) == 30
    # 60 writes through a bucket that was empty: at 5 a second they take 12 s of the clock, never less.
    assert connected.clock.now() - started >= 60 / 5 - 1e-9
    assert keeper.writes.deferred["report"] + keeper.writes.deferred["event"] >= 20 + 60
