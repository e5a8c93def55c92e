"""Gated pods' nominations hold room from 1.37 only.

Up to 1.36 the scheduler's nominator left out pods with scheduling gates, so their
status.nominatedNodeName kept nothing free; from 1.37 (kubernetes PR #139057) such a nomination holds
room against lower-priority pods like any other: a rule of limitguard.core.podrules, read from the
release table, and the state counts under the rules it is handed.
"""

from __future__ import annotations

from limitguard.core.podrules import rules_for
from limitguard.state.store import ClusterState
from tests.support import pod


def nominated(name: str, cpu: str, priority: int, gated: bool) -> dict:
    body = pod(name, cpu=cpu, phase="Pending", priority=priority)
    body["status"]["nominatedNodeName"] = "node2"
    if gated:
        body["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    return body


def test_a_gated_nomination_holds_room_from_137_only():
    state = ClusterState()
    state.upsert_pod(nominated("gated", cpu="4", priority=1000, gated=True))
    state.upsert_pod(nominated("ready", cpu="1", priority=1000, gated=False))
    state.use_pod_rules(rules_for(37))
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 5000}
    state.use_pod_rules(rules_for(36))
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 1000}
    state.use_pod_rules(rules_for(31))
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 1000}


def test_removing_the_gate_makes_the_nomination_count_in_every_release():
    state = ClusterState()
    state.upsert_pod(nominated("p", cpu="4", priority=1000, gated=True))
    state.use_pod_rules(rules_for(36))
    assert state.nominated_room("node2", 0, "default/low") == {}
    state.upsert_pod(nominated("p", cpu="4", priority=1000, gated=False))
    assert state.nominated_room("node2", 0, "default/low") == {"cpu": 4000}


def test_a_gated_nomination_of_lower_priority_holds_nothing_in_137():
    state = ClusterState()
    state.upsert_pod(nominated("gated", cpu="4", priority=10, gated=True))
    state.use_pod_rules(rules_for(37))
    assert state.nominated_room("node2", 100, "default/high") == {}
