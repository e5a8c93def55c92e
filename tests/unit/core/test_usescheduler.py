"""Which pods go to limitguard's scheduler, and how that joins the defaults' patch."""

from __future__ import annotations

import pytest

from limitguard.core.response import allowed, patched, warning
from limitguard.core.usescheduler import scheduler_operation, uses_scheduler, with_operation

OURS = "limitguard-scheduler"
SET = {"op": "add", "path": "/spec/schedulerName", "value": OURS}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        ({"spec": {"schedulerName": "default-scheduler"}}, SET),
        ({"spec": {"schedulerName": ""}}, SET),  # the apiserver would default it to default-scheduler
        ({"spec": {}}, SET),
        ({"spec": {"schedulerName": "koord-scheduler"}}, None),
        ({"spec": {"schedulerName": OURS}}, None),  # reinvocation after our own patch
        ({"spec": {"schedulerName": "default-scheduler", "nodeName": "node-1"}}, None),
        ({"spec": "garbage"}, None),
        ({}, None),
        ("not a pod", None),
    ],
)
def test_only_unbound_default_scheduler_pods_change(pod: object, expected: dict | None) -> None:
    assert scheduler_operation(pod, OURS) == expected


def test_node_agents_keep_their_scheduler() -> None:
    """A DaemonSet pod (the caller reads its controller) or a mirror pod has nothing to place."""
    unbound = {"spec": {"schedulerName": "default-scheduler"}}
    assert scheduler_operation(unbound, OURS, daemonset=True) is None
    mirror = {"metadata": {"annotations": {"kubernetes.io/config.mirror": "abc"}}, **unbound}
    assert scheduler_operation(mirror, OURS) is None
    odd = {"metadata": {"annotations": "garbage"}, **unbound}  # mutating webhooks see unvalidated pods
    assert scheduler_operation(odd, OURS) == SET


def test_no_scheduler_configured_changes_nothing() -> None:
    assert scheduler_operation({"spec": {"schedulerName": "default-scheduler"}}, "") is None


def test_the_label_must_read_exactly_enabled() -> None:
    assert uses_scheduler({"limitguard.io/use-scheduler": "enabled"})
    assert not uses_scheduler({"limitguard.io/use-scheduler": "Enabled"})
    assert not uses_scheduler({"limitguard.io/scheduler": "enabled"})


def test_joining_an_answer_keeps_its_operations_and_warnings() -> None:
    alone = with_operation(allowed("namespace-not-opted-in"), SET)
    assert (alone.reason, alone.patch.operations()) == ("scheduler-set", [SET])
    defaults = {"op": "add", "path": "/metadata/annotations", "value": {"limitguard.io/defaulted": "cpu"}}
    joined = with_operation(patched("defaulted", [defaults], warning("bad annotation")), SET)
    assert joined.reason == "defaulted+scheduler-set"
    assert joined.patch.operations() == [defaults, SET]
    assert joined.warnings == ("bad annotation",) and joined.allowed
