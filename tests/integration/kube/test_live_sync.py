"""Initial list, readiness and incremental watch events, against the fake API server."""

from __future__ import annotations

import orjson

from limitguard.kube.filefeed import load_cluster_file
from limitguard.kube.livefeed import ACTIVE_PODS_SELECTOR
from limitguard.state.store import ClusterState
from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import eventually


def small_cluster(server: FakeApiServer) -> None:
    """node-a: pods of 1 + 2 cpu (+ a Succeeded one of 4); node-b: 3 cpu; 7 pods in all over 3 pages."""
    for name in ("default", "team-a", "team-b", "team-c"):
        server.apply("namespaces", make_namespace(name))
    for name in ("node-a", "node-b", "node-c", "node-d"):
        server.apply("nodes", make_node(name))
    server.apply("pods", make_pod("team-a", "web-1", "node-a", cpu_limit="1"))
    server.apply("pods", make_pod("team-a", "web-2", "node-a", cpu_limit="2"))
    server.apply("pods", make_pod("team-a", "job-1", "node-a", cpu_limit="4", phase="Succeeded"))
    server.apply("pods", make_pod("team-b", "db-1", "node-b", cpu_limit="3"))
    server.apply("pods", make_pod("team-b", "pending-1", "", cpu_limit="5", phase="Pending"))
    for index in range(3):
        server.apply("pods", make_pod("team-c", f"idle-{index}", "node-c", cpu_limit="100m"))


async def test_initial_sync_is_paginated_and_skips_terminal_pods(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    state = live.state

    assert state.counts() == {"nodes": 4, "pods": 7, "namespaces": 4}
    assert state.pod("team-a", "job-1") is None  # Succeeded: filtered by the apiserver
    assert state.committed("node-a") == {"cpu": 3000, "memory": 2 * 1024**3}
    assert state.committed("node-b")["cpu"] == 3000
    assert state.committed("node-c")["cpu"] == 300
    assert state.namespace("team-b") is not None
    pod_lists = [seen for seen in apiserver.requests if seen.kind == "pods" and not seen.watch]
    assert [seen.params.get("limit") for seen in pod_lists] == ["3", "3", "3"]
    assert "continue" not in pod_lists[0].params and all("continue" in seen.params for seen in pod_lists[1:])
    assert all(seen.params["fieldSelector"] == ACTIVE_PODS_SELECTOR for seen in pod_lists)
    watches = [seen for seen in apiserver.requests if seen.watch]
    await eventually(lambda: len([s for s in apiserver.requests if s.watch]) >= 3, "three watches open")
    watches = [seen for seen in apiserver.requests if seen.watch]
    assert {seen.kind for seen in watches} == {"nodes", "pods", "namespaces"}
    assert all(seen.params["allowWatchBookmarks"] == "true" for seen in watches)
    assert all(int(seen.params["resourceVersion"]) == apiserver.rv for seen in watches)


async def test_not_ready_until_every_kind_is_listed(apiserver, connect) -> None:
    small_cluster(apiserver)
    held = apiserver.gate("pods")
    live = await connect(wait_ready=False)

    await eventually(lambda: live.feed.reflectors["nodes"].lists_completed == 1, "nodes listed")
    await eventually(lambda: live.feed.reflectors["namespaces"].lists_completed == 1, "namespaces listed")
    assert live.state.counts()["nodes"] == 4
    assert not live.state.ready  # pods are still being listed
    held.set()
    await eventually(lambda: live.state.ready, "ready once pods are listed")
    assert live.state.counts()["pods"] == 7


async def test_watch_events_of_every_kind_are_applied(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    state = live.state

    apiserver.apply("nodes", make_node("node-e", cpu="16"))
    apiserver.apply("nodes", make_node("node-a", cpu="32"))
    rv = apiserver.delete("nodes", "node-d")
    await live.applied("nodes", rv)
    assert state.node("node-e").allocatable["cpu"] == 16000
    assert state.node("node-a").allocatable["cpu"] == 32000
    assert state.node("node-d") is None

    apiserver.apply("namespaces", make_namespace("team-d"))
    rv = apiserver.delete("namespaces", "team-c")
    await live.applied("namespaces", rv)
    assert state.namespace("team-d") is not None
    assert state.namespace("team-c") is None

    apiserver.apply("pods", make_pod("team-a", "web-3", "node-a", cpu_limit="500m"))  # ADDED
    apiserver.apply("pods", make_pod("team-b", "db-1", "node-b", cpu_limit="6"))  # MODIFIED: bigger
    rv = apiserver.delete("pods", "team-c/idle-0")  # DELETED
    await live.applied("pods", rv)
    assert state.committed("node-a")["cpu"] == 3500
    assert state.committed("node-b")["cpu"] == 6000
    assert state.committed("node-c")["cpu"] == 200
    assert live.counter("limitguard_watch_events_total", kind="pods", type="ADDED") == 1
    assert live.counter("limitguard_watch_events_total", kind="pods", type="MODIFIED") == 1
    assert live.counter("limitguard_watch_events_total", kind="pods", type="DELETED") == 1


async def test_pod_reaching_a_terminal_phase_leaves_its_node_sum(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()

    apiserver.apply("pods", make_pod("team-a", "web-2", "node-a", cpu_limit="2", phase="Succeeded"))
    rv = apiserver.apply("pods", make_pod("team-b", "db-1", "node-b", cpu_limit="3", phase="Failed"))
    await live.applied("pods", rv)
    assert live.state.pod("team-a", "web-2") is None
    assert live.state.committed("node-a")["cpu"] == 1000
    assert live.state.committed("node-b").get("cpu", 0) == 0
    # The selector turns the phase change into DELETED, exactly like the apiserver's watch cache.
    assert live.counter("limitguard_watch_events_total", kind="pods", type="DELETED") == 2


async def test_ledger_entry_is_released_when_the_pod_is_seen_bound(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    pending = live.state.pod("team-b", "pending-1")
    live.state.ledger.reserve("node-c", pending.key, {"cpu": 5000})
    assert live.state.allocated("node-c")["cpu"] == 5300

    rv = apiserver.apply("pods", make_pod("team-b", "pending-1", "node-c", cpu_limit="5", phase="Pending"))
    await live.applied("pods", rv)
    assert len(live.state.ledger) == 0
    assert live.state.allocated("node-c")["cpu"] == 5300  # now counted once, from the cache


async def test_bookmarks_advance_the_resource_version_of_a_quiet_watch(apiserver, connect) -> None:
    small_cluster(apiserver)
    live = await connect()
    pods_before = live.state.counts()["pods"]

    rv = apiserver.apply("nodes", make_node("node-z"))  # the pods watch sees no event for this
    await live.applied("pods", rv)  # only a BOOKMARK can carry the pods reflector there
    assert live.counter("limitguard_watch_events_total", kind="pods", type="BOOKMARK") >= 1
    assert live.state.counts()["pods"] == pods_before


async def test_the_live_feed_and_the_file_feed_build_equal_records(apiserver, connect, tmp_path) -> None:
    small_cluster(apiserver)
    nominated = make_pod("team-b", "preemptor-1", "", cpu_limit="2", phase="Pending")
    nominated["status"]["nominatedNodeName"] = "node-b"
    nominated["spec"]["priority"] = 2_000_000  # an int object of its own per parse (shared in the records)
    leaving = make_pod("team-c", "leaving-1", "node-c", cpu_limit="3")
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    for extra in (nominated, leaving):
        apiserver.apply("pods", extra)
    live = await connect()
    listed = {
        kind: [orjson.loads(stored.body) for stored in apiserver.objects[kind].values()]
        for kind in ("namespaces", "nodes", "pods")
    }
    active = [pod for pod in listed["pods"] if pod["status"]["phase"] not in ("Succeeded", "Failed")]
    path = tmp_path / "cluster.json"
    items = [*listed["namespaces"], *listed["nodes"], *active]
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    from_file = ClusterState()
    load_cluster_file(from_file, path)

    state = live.state
    assert state.counts() == from_file.counts() == {"nodes": 4, "pods": 9, "namespaces": 4}
    for pod in from_file.pods():
        assert state.pod(pod.namespace, pod.name) == pod
    for node in from_file.nodes():
        assert state.node(node.name) == node
        for read in ("committed", "requested", "scoring_allocated", "terminating_pods", "nominated_pods"):
            assert getattr(state, read)(node.name) == getattr(from_file, read)(node.name), (node.name, read)
    for namespace in from_file.namespaces():
        assert state.namespace(namespace.name) == namespace
    assert state.pod("team-b", "preemptor-1").nominated_node == "node-b"
    assert state.pod("team-b", "preemptor-1").priority == 2_000_000
    assert state.pod("team-c", "leaving-1").terminating
    assert state.pod("team-a", "web-1").controller == ("apps", "ReplicaSet")
