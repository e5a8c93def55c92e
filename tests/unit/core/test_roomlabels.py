"""core.roomlabels: the label value per resource and its rounding, the keys, the patches, and the
full-node taint with its hysteresis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.core.names import is_label_value, is_qualified_name
from limitguard.core.roomlabels import (
    FULL_TAINT,
    INT64_MAX,
    MEBIBYTE,
    FullThreshold,
    NodeRoom,
    desired_labels,
    gt_value,
    has_full_taint,
    label_patch,
    label_value,
    lowers_room,
    room_label_key,
    taint_patch,
    taints_with,
    wants_full_taint,
)


@pytest.mark.parametrize(
    ("room", "resource", "value"),
    [
        (2000, "cpu", "2000"),  # millicores, exact
        (1, "cpu", "1"),
        (0, "cpu", "0"),
        (-500, "cpu", "0"),  # over its ratio: never a negative label value
        (2**30, "memory", "1024"),  # MiB
        (2**30 - 1, "memory", "1023"),  # rounded down: never more room than there is
        (MEBIBYTE - 1, "memory", "0"),
        (3 * MEBIBYTE, "hugepages-2Mi", "3"),
        (5 * MEBIBYTE + 7, "ephemeral-storage", "5"),
        (4, "nvidia.com/gpu", "4"),  # whole units
        (None, "cpu", str(INT64_MAX)),  # not checked: every limit fits it
        (2**70, "nvidia.com/gpu", str(INT64_MAX)),  # never past what Gt can parse
    ],
)
def test_the_label_value(room, resource, value):
    assert label_value(room, resource) == value
    assert is_label_value(value)


@pytest.mark.parametrize(
    ("resource", "key"),
    [
        ("cpu", "limitguard.io/limit-room-cpu"),
        ("memory", "limitguard.io/limit-room-memory"),
        ("nvidia.com/gpu", "limitguard.io/limit-room-nvidia.com_gpu"),
        ("hugepages-1Gi", "limitguard.io/limit-room-hugepages-1Gi"),
        ("example.com/" + "x" * 40, "limitguard.io/limit-room-example.com_" + "x" * 40),  # 63 characters
        ("example.com/" + "x" * 41, None),  # 64: not labelled
    ],
)
def test_the_label_key(resource, key):
    assert room_label_key(resource) == key
    assert key is None or is_qualified_name(key)


@given(
    room=st.integers(-(2**40), 2**62),
    limit=st.integers(1, 2**62),
    resource=st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]),
)
def test_gt_matches_a_label_exactly_when_the_room_holds_the_limit_in_whole_units(room, limit, resource):
    value = gt_value(limit, resource)
    assert value is not None and 0 <= value < INT64_MAX
    matched = int(label_value(room, resource)) > value
    unit = MEBIBYTE if resource == "memory" else 1
    if matched:
        assert room >= limit  # never a node without room
    if room >= -(-limit // unit) * unit:
        assert matched  # a node with the limit left in whole units, always
    assert int(label_value(None, resource)) > value  # a node that does not check it, always


def test_gt_edges():
    assert gt_value(0, "cpu") is None  # nothing to require
    assert gt_value(1, "cpu") == 0
    assert gt_value(2000, "cpu") == 1999
    assert gt_value(2**63 - 1, "cpu") == 2**63 - 2
    assert gt_value(2**63, "cpu") is None  # Gt 2^63 - 1 would match no node at all
    assert gt_value(2**100, "memory") is None


def test_desired_labels_skip_a_resource_whose_key_is_too_long():
    rooms = {"cpu": NodeRoom(1500, 4000), "example.com/" + "y" * 60: NodeRoom(1, 1)}
    assert desired_labels(rooms) == {"limitguard.io/limit-room-cpu": "1500"}


def test_the_label_patch_sets_changes_removes_and_is_none_when_nothing_differs():
    current = {"limitguard.io/limit-room-cpu": "100", "limitguard.io/limit-room-old": "7"}
    desired = {"limitguard.io/limit-room-cpu": "90", "limitguard.io/limit-room-memory": "5"}
    assert label_patch(current, desired) == {
        "metadata": {
            "labels": {
                "limitguard.io/limit-room-cpu": "90",
                "limitguard.io/limit-room-memory": "5",
                "limitguard.io/limit-room-old": None,
            }
        }
    }
    assert label_patch(desired, desired) is None


@pytest.mark.parametrize(
    ("current", "desired", "lowers"),
    [
        ({"k": "100"}, {"k": "90"}, True),
        ({"k": "100"}, {"k": "110"}, False),
        ({}, {"k": "0"}, False),  # a new label makes the node match more pods, not fewer
        ({"k": "100"}, {}, False),
        ({"k": "x"}, {"k": "5"}, True),  # a value that is not ours to read counts as the largest
    ],
)
def test_lowering_writes_are_the_urgent_ones(current, desired, lowers):
    assert lowers_room(current, desired) is lowers


THRESHOLD = FullThreshold(below=10, hysteresis=5)


@pytest.mark.parametrize(
    ("tainted", "rooms", "wanted"),
    [
        (False, [NodeRoom(99, 1000)], True),  # 9.9 % left
        (False, [NodeRoom(100, 1000)], False),  # exactly 10 %: not below
        (True, [NodeRoom(100, 1000)], True),  # hysteresis: stays tainted until 15 %
        (True, [NodeRoom(149, 1000)], True),
        (True, [NodeRoom(150, 1000)], False),
        (False, [NodeRoom(500, 1000), NodeRoom(5, 1000)], True),  # any resource
        (True, [NodeRoom(500, 1000), NodeRoom(149, 1000)], True),  # every one must be clear
        (False, [NodeRoom(None, 0)], False),  # not checked: never full
        (False, [NodeRoom(0, 0)], False),  # no capacity of a resource it does not have
        (False, [NodeRoom(-10, 1000)], True),  # over its ratio
        (True, [], False),
    ],
)
def test_the_taint_with_hysteresis(tainted, rooms, wanted):
    assert wants_full_taint(tainted, rooms, THRESHOLD) is wanted


def test_a_node_near_the_threshold_does_not_flap():
    tainted, changes = False, 0
    for room in [95, 105, 98, 112, 101, 140, 99, 149, 151, 140, 101, 99]:  # of 1000, pods coming and going
        wanted = wants_full_taint(tainted, [NodeRoom(room, 1000)], THRESHOLD)
        changes += wanted != tainted
        tainted = wanted
    assert changes == 3  # on at 95, off at 151, on again at 99


OTHER = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TIMED = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}


def test_the_taint_list_keeps_every_other_taint_as_it_is():
    assert taints_with([OTHER, TIMED], True) == [OTHER, TIMED, FULL_TAINT]
    assert taints_with([OTHER, FULL_TAINT, TIMED], False) == [OTHER, TIMED]
    assert taints_with([OTHER, FULL_TAINT], True) is None
    assert taints_with([OTHER], False) is None
    assert taints_with([], False) is None
    # ours with another effect or a value, or twice: written once, as limitguard writes it
    odd = {"key": FULL_TAINT["key"], "effect": "NoSchedule"}
    assert taints_with([odd, OTHER], True) == [OTHER, FULL_TAINT]
    assert taints_with([FULL_TAINT, dict(FULL_TAINT)], True) == [FULL_TAINT]
    assert has_full_taint([OTHER, FULL_TAINT]) and not has_full_taint([OTHER])


def test_the_taint_patch_carries_the_resource_version_and_the_whole_list():
    assert taint_patch("42", [OTHER, FULL_TAINT]) == {
        "metadata": {"resourceVersion": "42"},
        "spec": {"taints": [OTHER, FULL_TAINT]},
    }
