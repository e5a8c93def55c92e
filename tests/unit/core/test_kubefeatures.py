"""The one table of what each Kubernetes minor brings, and the pod rules read from it.

Facts from the versioned gate specs of pkg/features/kube_features.go (1.38 development line) and the
changes each row names; docs/versions.md shows the same table to users.
"""

from __future__ import annotations

import pytest

from limitguard.core import kubefeatures
from limitguard.core.kubefeatures import (
    GATE_READERS,
    POD_RULES,
    RELEASES,
    SCHEDULER_CONFIGURATION,
    Stage,
    gate_default,
    gate_problems,
    gate_spec,
    gates_read_by,
    has_change,
)
from limitguard.core.kubeversion import SUPPORTED_MINORS
from limitguard.core.podrules import RULES


def test_one_row_per_supported_minor_oldest_first() -> None:
    assert tuple(row.minor for row in RELEASES) == SUPPORTED_MINORS


def test_every_gate_a_row_names_is_read_by_a_part_of_limitguard() -> None:
    named = {gate for row in RELEASES for gate in (*row.gates, *row.removed_gates)}
    assert named == set(GATE_READERS)
    assert gates_read_by(POD_RULES) == {
        "InPlacePodLevelResourcesVerticalScaling",
        "PodLevelResourcesFixKubeletQOSClass",
        "PodLevelResourcesFixDefaulting",
    }
    assert "DynamicResourceAllocation" in gates_read_by(SCHEDULER_CONFIGURATION)


def test_a_gate_keeps_its_spec_until_a_row_changes_it() -> None:
    assert [gate_spec("DynamicResourceAllocation", m).stage for m in SUPPORTED_MINORS] == [
        Stage.ALPHA,
        Stage.BETA,
        Stage.BETA,
        Stage.GA,
        Stage.GA,
        Stage.GA,
        Stage.GA,
    ]
    assert [gate_default("DynamicResourceAllocation", m) for m in SUPPORTED_MINORS] == [
        *[False] * 3,
        *[True] * 4,
    ]
    assert gate_spec("DynamicResourceAllocation", 34).locked is False
    assert gate_spec("DynamicResourceAllocation", 35).locked is True


def test_a_gate_exists_from_its_first_row_until_its_removal() -> None:
    assert gate_spec("GangScheduling", 34) is None
    assert gate_spec("GangScheduling", 36) == kubefeatures.ALPHA_OFF
    assert gate_spec("GangScheduling", 37) is None
    assert gate_default("VolumeCapacityPriority", 32) is False
    assert gate_default("VolumeCapacityPriority", 33) is None
    assert gate_default("NotAGate", 37) is None


def test_what_binaries_refuse() -> None:
    assert gate_problems({"GangScheduling": True}, 36) == []
    assert gate_problems({"GangScheduling": True}, 37) == [
        "unrecognized feature gate: GangScheduling (removed in Kubernetes 1.37)"
    ]
    assert gate_problems({"NodeDeclaredFeatures": False}, 37) == [
        "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true in Kubernetes 1.37"
    ]
    assert gate_problems({"NodeDeclaredFeatures": True, "Unlisted": False}, 37) == []


def test_changes_without_a_gate_count_from_their_row() -> None:
    assert not has_change("fit.ratio-required-forbidden", 35)
    assert has_change("fit.ratio-required-forbidden", 36) and has_change("fit.ratio-required-forbidden", 37)
    with pytest.raises(KeyError):
        has_change("no-such-change", 37)


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_the_pod_rules_are_the_gates_defaults_and_changes_of_their_release(minor: int) -> None:
    rules = RULES[minor]
    assert rules.minor == minor
    assert rules.pod_level_resize is bool(gate_default("InPlacePodLevelResourcesVerticalScaling", minor))
    assert rules.qos_needs_pod_level_resource is bool(
        gate_default("PodLevelResourcesFixKubeletQOSClass", minor)
    )
    assert rules.pod_level_defaulting_after_mutation is bool(
        gate_default("PodLevelResourcesFixDefaulting", minor)
    )
    assert rules.whole_pod_resize is has_change("pod-resources.whole-pod-resize", minor)
    assert rules.gated_nominations_hold is has_change("scheduler.gated-nominations-hold", minor)


def test_the_pod_rules_change_where_the_documented_releases_say() -> None:
    """docs/versions.md#pod-rules: 1.31-1.35 alike, pod-level resize from 1.36, the rest from 1.37."""
    changed = [m for m in SUPPORTED_MINORS[1:] if _flags(m) != _flags(m - 1)]
    assert changed == [36, 37]
    assert _flags(36) == (True, False, False, False, False)
    assert _flags(37) == (True, True, True, True, True)


def _flags(minor: int) -> tuple[bool, ...]:
    rules = RULES[minor]
    return (
        rules.pod_level_resize,
        rules.whole_pod_resize,
        rules.qos_needs_pod_level_resource,
        rules.pod_level_defaulting_after_mutation,
        rules.gated_nominations_hold,
    )
