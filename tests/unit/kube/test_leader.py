"""The election's pure decisions (client-go tryAcquireOrRenew), on plain data and a given time."""

from __future__ import annotations

from datetime import UTC, datetime

from limitguard.kube.leader import (
    ADDRESS_ANNOTATION,
    ElectionTiming,
    LeaseRecord,
    Observation,
    claim,
    lease_object,
    lease_valid,
    micro_time,
    record_from_lease,
)

WALL = "2026-11-22T22:00:00.000000Z"


def seen(holder: str, at: float, duration: int = 15, transitions: int = 0) -> Observation:
    return Observation(LeaseRecord(holder, duration, "a", "r", transitions, "10.0.0.1:8443"), "7", at)


def test_a_missing_lease_is_created_with_no_transitions() -> None:
    record = claim(None, "me", "10.0.0.2:8443", 15, now=0.0, wall=WALL)
    assert record == LeaseRecord("me", 15, WALL, WALL, 0, "10.0.0.2:8443")


def test_another_holder_keeps_the_lease_until_our_observation_plus_its_duration() -> None:
    observed = seen("other", at=100.0)
    assert claim(observed, "me", "x", 15, now=114.999, wall=WALL) is None
    taken = claim(observed, "me", "x", 15, now=115.0, wall=WALL)
    assert (
        taken is not None and taken.holder == "me" and taken.transitions == 1 and taken.acquire_time == WALL
    )


def test_expiry_uses_the_observed_time_not_the_renew_time_written_by_the_holder() -> None:
    """A holder whose wall clock is hours off changes nothing: only when *we* saw the record counts."""
    skewed = Observation(
        LeaseRecord("other", 15, "1999-01-01T00:00:00.000000Z", "1999-01-01T00:00:00.000000Z"), "9", 50.0
    )
    assert lease_valid(skewed, 64.0)
    assert not lease_valid(skewed, 65.0)


def test_renewing_keeps_acquire_time_and_transitions() -> None:
    mine = Observation(LeaseRecord("me", 15, "first", "old", 3, "old-address"), "8", 0.0)
    renewed = claim(mine, "me", "new-address", 15, now=1000.0, wall=WALL)  # even past its own expiry
    assert renewed == LeaseRecord("me", 15, "first", WALL, 3, "new-address")


def test_a_released_lease_is_free_at_once() -> None:
    released = Observation(LeaseRecord("", 1, None, WALL, 4), "9", 100.0)
    assert not lease_valid(released, 100.0)
    taken = claim(released, "me", "x", 15, now=100.0, wall=WALL)
    assert taken is not None and taken.transitions == 5


def test_lease_object_round_trips_and_carries_the_resource_version_for_compare_and_swap() -> None:
    record = LeaseRecord("me", 15, WALL, WALL, 2, "[fd00::1]:8443")
    obj = lease_object("ns", "limitguard", record, "42")
    assert obj["apiVersion"] == "coordination.k8s.io/v1" and obj["kind"] == "Lease"
    assert obj["metadata"] == {
        "name": "limitguard",
        "namespace": "ns",
        "resourceVersion": "42",
        "annotations": {ADDRESS_ANNOTATION: "[fd00::1]:8443"},
    }
    assert obj["spec"]["holderIdentity"] == "me" and obj["spec"]["leaseTransitions"] == 2
    assert record_from_lease(obj) == record
    assert "resourceVersion" not in lease_object("ns", "limitguard", record)["metadata"]


def test_micro_time_is_rfc3339_with_microseconds_in_utc() -> None:
    assert micro_time(datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)) == "2026-01-02T03:04:05.000006Z"


def test_timing_rules_are_client_gos() -> None:
    assert ElectionTiming().problems() == []
    assert ElectionTiming(10, 10, 2).problems() == [
        "leaseDurationSeconds must be greater than renewDeadlineSeconds"
    ]
    assert ElectionTiming(15, 2.4, 2).problems() == [
        "renewDeadlineSeconds must be greater than retryPeriodSeconds x 1.2"
    ]
