"""The pod rules follow the cluster's release: GET /version before the first list, again on every
watch reconnect, and a changed release recounts the pods (fake apiserver, real reflectors)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from limitguard.kube.livefeed import start_live_feed
from limitguard.state.store import ClusterState
from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.clock import FakeClock
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import FAST, eventually, write_kubeconfig


def resizing_pod() -> dict:
    """Two containers resizing 4->1 and 1->4 cpu: 8 under the 1.36 rules, 5 under 1.37's."""
    pod = make_pod("default", "resizing", "node-a", cpu_limit="1")
    second = dict(pod["spec"]["containers"][0], name="second")
    second["resources"] = {"limits": {"cpu": "4", "memory": "1Gi"}, "requests": {"cpu": "100m"}}
    pod["spec"]["containers"].append(second)
    pod["status"]["containerStatuses"] = [
        {"name": "main", "resources": {"limits": {"cpu": "4"}}},
        {"name": "second", "resources": {"limits": {"cpu": "1"}}},
    ]
    return pod


@pytest.fixture
async def follow(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator:
    apiserver.apply("namespaces", make_namespace("default"))
    apiserver.apply("nodes", make_node("node-a"))
    apiserver.apply("pods", resizing_pod())
    feeds = []

    async def start():
        url = await apiserver.start()
        clock = FakeClock(autojump=True)
        state = ClusterState(clock=clock)
        feed = await start_live_feed(
            state, write_kubeconfig(tmp_path, url), settings=FAST, clock=clock, follow_release=True
        )
        feeds.append(feed)
        await eventually(lambda: state.ready, "state ready")
        return state, feed

    yield start
    for feed in feeds:
        await feed.stop()


async def test_the_first_list_counts_under_the_clusters_release(apiserver, follow) -> None:
    apiserver.git_version = "v1.36.2"
    state, feed = await follow()
    assert state.pod_rules.minor == 36
    assert feed.release.version == "v1.36.2"
    assert feed.release.why == "cluster v1.36.2, from the apiserver's /version"
    assert state.committed("node-a")["cpu"] == 8000


async def test_an_upgrade_seen_on_reconnect_recounts_the_pods(apiserver, follow) -> None:
    apiserver.git_version = "v1.36.2"
    state, feed = await follow()
    pods = feed.reflectors["pods"]
    listed = pods.lists_completed
    apiserver.git_version = "v1.37.1"  # the control plane is upgraded; its restart ends the watches
    apiserver.close_watches()
    await eventually(lambda: state.pod_rules.minor == 37, "1.37 rules applied")
    await eventually(lambda: pods.lists_completed > listed, "pods relisted")
    await eventually(lambda: state.committed("node-a")["cpu"] == 5000, "recounted under 1.37")


async def test_a_release_outside_the_range_is_clamped(apiserver, follow) -> None:
    apiserver.git_version = "v1.40.0"
    state, _ = await follow()
    assert state.pod_rules.minor == 37
    reads = apiserver.version_reads
    apiserver.close_watches()
    await eventually(lambda: apiserver.version_reads > reads, "read again on reconnect")
    assert state.pod_rules.minor == 37
