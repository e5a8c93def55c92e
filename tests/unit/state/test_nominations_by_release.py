"""Gated pods' nominations hold room from 1.37 only.

Up to 1.36 the scheduler's nominator left out pods with scheduling gates, so their
status.nominatedNodeName kept nothing free; from 1.37 (kubernetes PR #139057) such a nomination holds
room against lower-priority pods like any other. The release is a row of limitguard.core.podrules.
"""

from __future__ import annotations

import pytest

from limitguard.core.kubeversion import DEFAULT_MINOR
from limitguard.core.podlimits import use_release
from limitguard.state.store import ClusterState
from tests.support import pod


@pytest.fixture
def release():
    yield use_release
    use_release(DEFAULT_MINOR)


def nominated(name: str, cpu: str, priority: int, gated: bool) -> dict:
    body = pod(name, cpu=cpu, phase="Pending", priority=priority)
    body["status"]["nominatedNodeName"] = "node2"
    if gated:
        body["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    return body


def test_a_gated_nomination_holds_room_from_137_only(release):
    state = ClusterState()
    state.upsert_pod(nominated("gated", cpu="4", priority=1000, gated=True))
    state.upsert_pod(nominated("ready", cpu="1", priority=1000, gated=False))
    release(37)
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 5000}
    release(36)
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 1000}
    release(31)
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 1000}


def test_removing_the_gate_makes_the_nomination_count_in_every_release(release):
    state = ClusterState()
    state.upsert_pod(nominated("p", cpu="4", priority=1000, gated=True))
    release(36)
    assert state.nominated_room("node2", 0, "default/low") == {}
    state.upsert_pod(nominated("p", cpu="4", priority=1000, gated=False))
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 4000}


def test_a_gated_nomination_of_lower_priority_holds_nothing_in_137(release):
    state = ClusterState()
    state.upsert_pod(nominated("gated", cpu="4", priority=10, gated=True))
    release(37)
    assert state.nominated_room("node2", 100, "default/high") == {}
