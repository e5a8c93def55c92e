"""Leases on the fake apiserver, and the elector's compare-and-swap, release and catch-up against them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import orjson
import pytest

from limitguard.kube.catchup import pods_caught_up
from limitguard.kube.client import ApiError, KubeClient, load_configuration
from limitguard.kube.leader import Elector, LeaseRecord, lease_object
from limitguard.testing.builders import make_pod
from limitguard.testing.clock import ManualClock
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import eventually, lease_elector, write_kubeconfig

NS, NAME = "limitguard-system", "limitguard"
TIMEOUT = aiohttp.ClientTimeout(total=60)
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"


@pytest.fixture
async def client(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[KubeClient]:
    url = await apiserver.start()
    configuration, _ = load_configuration(write_kubeconfig(tmp_path, url))
    kube = KubeClient(configuration)
    yield kube
    await kube.close()


def record(holder: str) -> LeaseRecord:
    return LeaseRecord(holder, 15, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z", 0, "")


async def status_of(call) -> int:
    try:
        await call
    except ApiError as error:
        return error.status
    return 200


async def test_fake_leases_create_get_update_with_compare_and_swap(client: KubeClient, apiserver) -> None:
    assert await status_of(client.send_json("GET", f"{LEASES}/{NAME}", None, TIMEOUT)) == 404
    created = await client.send_json("POST", LEASES, lease_object(NS, NAME, record("a")), TIMEOUT)
    version = created["metadata"]["resourceVersion"]
    assert created["metadata"]["uid"] and created["spec"]["holderIdentity"] == "a"
    assert (
        await status_of(client.send_json("POST", LEASES, lease_object(NS, NAME, record("b")), TIMEOUT)) == 409
    )

    updated = await client.send_json(
        "PUT", f"{LEASES}/{NAME}", lease_object(NS, NAME, record("b"), version), TIMEOUT
    )
    assert int(updated["metadata"]["resourceVersion"]) > int(version)
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    stale = client.send_json("PUT", f"{LEASES}/{NAME}", lease_object(NS, NAME, record("c"), version), TIMEOUT)
    with pytest.raises(ApiError) as conflict:
        await stale
    assert conflict.value.status == 409 and conflict.value.reason == "Conflict"
    assert "the object has been modified" in conflict.value.message
    assert apiserver.lease(NS, NAME)["spec"]["holderIdentity"] == "b"

    unconditional = await client.send_json(
        "PUT", f"{LEASES}/{NAME}", lease_object(NS, NAME, record("d")), TIMEOUT
    )
    assert unconditional["spec"]["holderIdentity"] == "d"
    missing = client.send_json("PUT", f"{LEASES}/other", lease_object(NS, "other", record("d")), TIMEOUT)
    assert await status_of(missing) == 404
    invalid = lease_object(NS, NAME, LeaseRecord("e", 0))
    assert await status_of(client.send_json("PUT", f"{LEASES}/{NAME}", invalid, TIMEOUT)) == 422


async def test_fake_lease_watch_streams_changes_in_its_namespace(client: KubeClient, apiserver) -> None:
    start = apiserver.rv
    await client.send_json("POST", LEASES, lease_object(NS, NAME, record("a")), TIMEOUT)
    other = "/apis/coordination.k8s.io/v1/namespaces/elsewhere/leases"
    await client.send_json("POST", other, lease_object("elsewhere", NAME, record("x")), TIMEOUT)
    current = apiserver.lease(NS, NAME)
    await client.send_json(
        "PUT",
        f"{LEASES}/{NAME}",
        lease_object(NS, NAME, record("b"), current["metadata"]["resourceVersion"]),
        TIMEOUT,
    )
    params = {"watch": "true", "resourceVersion": str(start), "timeoutSeconds": "1"}
    async with client.get(LEASES, params, TIMEOUT) as response:
        lines = [line for line in (await response.read()).splitlines() if line]
    events = [orjson.loads(line) for line in lines]
    assert [(e["type"], e["object"]["spec"]["holderIdentity"]) for e in events] == [
        ("ADDED", "a"),
        ("MODIFIED", "b"),
    ]
    listed = await client.get_json(LEASES, {}, TIMEOUT)
    assert listed["kind"] == "LeaseList" and [i["metadata"]["namespace"] for i in listed["items"]] == [NS]


def elector(client: KubeClient, identity: str, clock: ManualClock, **kwargs) -> Elector:
    return lease_elector(client, NS, NAME, identity, clock, **kwargs)


async def test_compare_and_swap_stops_a_second_writer_reading_the_same_version(
    client: KubeClient, apiserver
) -> None:
    clock = ManualClock()
    await client.send_json("POST", LEASES, lease_object(NS, NAME, LeaseRecord("", 1)), TIMEOUT)
    a, b = elector(client, "a", clock), elector(client, "b", clock)
    original_get = a.api.get

    both_read = asyncio.Barrier(2)

    async def get_then_wait():
        lease = await original_get()
        await both_read.wait()
        return lease

    a.api.get = get_then_wait  # type: ignore[method-assign]
    b.api.get = get_then_wait  # type: ignore[method-assign]
    results = await asyncio.gather(a.try_acquire_or_renew(), b.try_acquire_or_renew())
    assert sorted(results) == [False, True]  # the second PUT carried a stale resourceVersion: 409
    winner = apiserver.lease(NS, NAME)["spec"]["holderIdentity"]
    assert apiserver.lease(NS, NAME)["spec"]["leaseTransitions"] == 1
    loser = b if winner == "a" else a
    loser.api.get = original_get  # type: ignore[method-assign]
    await loser.try_acquire_or_renew()  # reads again: the winner holds a valid lease
    assert loser.observed is not None and loser.observed.record.holder == winner
    assert loser.leader_address() == f"{winner}:8443"


async def test_a_released_lease_is_taken_on_the_next_round_without_waiting_for_expiry(
    client, apiserver
) -> None:
    clock = ManualClock()
    leader, other = elector(client, "a", clock), elector(client, "b", clock)
    tasks = [asyncio.create_task(leader.run())]
    await eventually(lambda: leader.deciding, "a leads", 60)
    tasks.append(asyncio.create_task(other.run()))
    await eventually(lambda: clock.is_sleeping(tasks[1]), "b idle", 60)
    assert other.leader_address() == "a:8443"

    assert leader.resign() is True
    assert not leader.deciding
    await leader.release()
    assert apiserver.lease(NS, NAME)["spec"]["holderIdentity"] == ""
    await clock.advance(2 * 2.0 * 2.2)  # at most two jittered retry periods, far below leaseDuration
    assert other.leading
    assert apiserver.lease(NS, NAME)["spec"]["holderIdentity"] == "b"
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_catch_up_relists_when_the_watch_brings_nothing_new(connect, apiserver) -> None:
    """No pod events and no bookmarks after the lease write: after relist_after, a fresh list settles it."""
    apiserver.bookmark_interval = 3600.0
    apiserver.apply("pods", make_pod("default", "p", "node1"))
    live = await connect()
    target = apiserver.apply("nodes", {"metadata": {"name": "node1"}, "status": {}})  # not a pod event
    clock = ManualClock()
    pods = live.feed.reflectors["pods"]
    assert int(pods.resource_version) < target
    waiting = asyncio.create_task(pods_caught_up(pods, str(target), sleep=clock.sleep, relist_after=10.0))
    await eventually(lambda: clock.is_sleeping(_timer_of(clock, waiting)), "catch-up timer armed", 60)
    assert not waiting.done()
    await clock.advance(10.0)
    assert await asyncio.wait_for(waiting, 60) == "relist"
    assert int(pods.resource_version) >= target


def _timer_of(clock: ManualClock, waiting: asyncio.Task) -> asyncio.Task | None:
    """The relist timer task pods_caught_up sleeps in (the only sleeper on this clock)."""
    sleepers = list(clock._sleepers)
    return sleepers[0] if sleepers else None


async def test_catch_up_by_the_watch_when_pods_change(connect, apiserver) -> None:
    apiserver.apply("pods", make_pod("default", "p", "node1"))
    live = await connect()
    target = apiserver.apply("pods", make_pod("default", "q", "node1"))
    clock = ManualClock()
    how = await asyncio.wait_for(
        pods_caught_up(live.feed.reflectors["pods"], str(target), sleep=clock.sleep, relist_after=10.0), 60
    )
    assert how == "watch" and clock.time == 1000.0
