"""What each Kubernetes minor brings: feature gates with their stages, and changes made without a gate.

The one table of release-dependent facts. The first row is 1.31 as limitguard starts from it (every
gate it reads, at its stage then); each later row holds only what that minor changed, so a reviewer
diffs a release against the one before by reading one row. Everything that behaves differently by
release reads it: the pod rules (``limitguard.core.podrules``) and the scheduler-configuration
validator (``limitguard.schedcfg``: gate defaults, locked and removed gates, rule changes).

Gates are listed only when a rule of limitguard depends on them; ``GATE_READERS`` says which part
reads each. Sources (facts only): the versioned gate specs of ``pkg/features/kube_features.go``
(kubernetes 1.38 development line, which keeps every step since each gate's alpha), cross-checked
against kubernetes/kube-scheduler tags v0.35.7, v0.36.3 and v0.37.0-beta.0; the changes without a
gate name their source where they are listed. component-base refuses ``--feature-gates`` naming a
gate the binary does not know, and setting a gate locked to its default to the other value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from limitguard.core.kubeversion import SUPPORTED_MINORS


class Stage(StrEnum):
    """A gate's maturity (component-base ``featuregate.PreRelease``)."""

    ALPHA = "alpha"
    BETA = "beta"
    GA = "GA"


@dataclass(frozen=True, slots=True)
class GateSpec:
    """A gate from one minor on: its stage, its default, and whether the default is locked."""

    stage: Stage
    default: bool
    locked: bool = False


def _gate(stage: Stage, default: bool, locked: bool = False) -> GateSpec:
    return GateSpec(stage, default, locked)


ALPHA_OFF = _gate(Stage.ALPHA, False)
BETA_OFF = _gate(Stage.BETA, False)
BETA_ON = _gate(Stage.BETA, True)
GA_ON = _gate(Stage.GA, True)
GA_LOCKED = _gate(Stage.GA, True, locked=True)


@dataclass(frozen=True)
class MinorRelease:
    """What Kubernetes 1.<minor> brings compared with the minor before it."""

    minor: int
    #: Gates that are new, or change stage, default or lock, from this minor on.
    gates: Mapping[str, GateSpec] = field(default_factory=dict)
    #: Gates this minor's binaries no longer know (naming one in --feature-gates fails start-up).
    removed_gates: frozenset[str] = frozenset()
    #: Behaviour that changed without a gate: name -> where it was read.
    changes: Mapping[str, str] = field(default_factory=dict)


#: Oldest first, one row per supported minor.
RELEASES: tuple[MinorRelease, ...] = (
    MinorRelease(
        31,
        gates={
            "DynamicResourceAllocation": ALPHA_OFF,  # alpha since 1.26
            "VolumeCapacityPriority": ALPHA_OFF,  # alpha since 1.21
        },
    ),
    MinorRelease(
        32,
        gates={
            "DynamicResourceAllocation": BETA_OFF,
            "DRAResourceClaimDeviceStatus": ALPHA_OFF,
        },
    ),
    MinorRelease(
        33,
        gates={
            "DRAResourceClaimDeviceStatus": BETA_ON,
            "StorageCapacityScoring": ALPHA_OFF,
        },
        removed_gates=frozenset({"VolumeCapacityPriority"}),  # renamed StorageCapacityScoring
        changes={
            # VolumeCapacityPriority renamed StorageCapacityScoring; its default shape scores empty
            # nodes high
            "volume-binding.storage-capacity-scoring": "scheduler/apis/config/v1/defaults.go, "
            "validation_pluginargs.go",
        },
    ),
    MinorRelease(
        34,
        gates={
            "DynamicResourceAllocation": GA_ON,
            "DRASchedulerFilterTimeout": BETA_ON,
            "DRADeviceBindingConditions": ALPHA_OFF,
        },
    ),
    MinorRelease(
        35,
        gates={
            "DynamicResourceAllocation": GA_LOCKED,
            "GangScheduling": ALPHA_OFF,
            "GenericWorkload": ALPHA_OFF,
            "NodeDeclaredFeatures": ALPHA_OFF,
            "InPlacePodLevelResourcesVerticalScaling": ALPHA_OFF,
        },
        changes={
            # DynamicResourcesArgs.bindingTimeout is a field
            "dra.binding-timeout-field": "kube-scheduler config/v1/types_pluginargs.go",
        },
    ),
    MinorRelease(
        36,
        gates={
            "DRADeviceBindingConditions": BETA_ON,
            "TopologyAwareWorkloadScheduling": ALPHA_OFF,
            "NodeDeclaredFeatures": BETA_ON,
            # a pod-level value counts max(spec, status) during a pod-level resize
            "InPlacePodLevelResourcesVerticalScaling": BETA_ON,
        },
        changes={
            # NodeResourcesFitArgs: requestedToCapacityRatio Required / Forbidden by type
            "fit.ratio-required-forbidden": "validation_pluginargs.go (kubernetes PR #132120)",
        },
    ),
    MinorRelease(
        37,
        gates={
            "DRAResourceClaimDeviceStatus": GA_LOCKED,
            "StorageCapacityScoring": BETA_ON,
            "GenericWorkload": BETA_OFF,
            "NodeDeclaredFeatures": GA_LOCKED,
            # only a supported pod-level resource makes QoS pod-level
            "PodLevelResourcesFixKubeletQOSClass": BETA_ON,
            # pod-level requests/limits are defaulted after the mutating admission webhooks; on by
            # default from 1.37 (kubernetes PR #140514), before GA
            "PodLevelResourcesFixDefaulting": BETA_ON,
        },
        removed_gates=frozenset({"GangScheduling"}),
        changes={
            # during a resize the containers count max(sum of spec, sum of actuated[, sum of
            # allocated]) over the whole pod, every init container reads its status, pod-level status
            # maps stand in for the sums
            "pod-resources.whole-pod-resize": "k8s.io/component-helpers resource/helpers.go "
            "v0.37.0-beta.0 (aggregateContainerResourcesByFn)",
            # the scheduler's nominator keeps the nominations of pods with scheduling gates
            "scheduler.gated-nominations-hold": "kubernetes PR #139057",
        },
    ),
)

#: Which part of limitguard reads each gate: the scheduler-configuration validator or the pod rules.
SCHEDULER_CONFIGURATION = "scheduler configuration"
POD_RULES = "pod rules"
GATE_READERS: Mapping[str, str] = {
    "DynamicResourceAllocation": SCHEDULER_CONFIGURATION,
    "DRASchedulerFilterTimeout": SCHEDULER_CONFIGURATION,
    "DRAResourceClaimDeviceStatus": SCHEDULER_CONFIGURATION,
    "DRADeviceBindingConditions": SCHEDULER_CONFIGURATION,
    "VolumeCapacityPriority": SCHEDULER_CONFIGURATION,
    "StorageCapacityScoring": SCHEDULER_CONFIGURATION,
    "GangScheduling": SCHEDULER_CONFIGURATION,
    "GenericWorkload": SCHEDULER_CONFIGURATION,
    "TopologyAwareWorkloadScheduling": SCHEDULER_CONFIGURATION,
    "NodeDeclaredFeatures": SCHEDULER_CONFIGURATION,
    "InPlacePodLevelResourcesVerticalScaling": POD_RULES,
    "PodLevelResourcesFixKubeletQOSClass": POD_RULES,
    "PodLevelResourcesFixDefaulting": POD_RULES,
}


def gates_read_by(reader: str) -> frozenset[str]:
    """The gates one part of limitguard reads (``SCHEDULER_CONFIGURATION`` or ``POD_RULES``)."""
    return frozenset(gate for gate, read_by in GATE_READERS.items() if read_by == reader)


_BY_MINOR: dict[int, MinorRelease] = {row.minor: row for row in RELEASES}


def _gate_table() -> dict[str, dict[int, GateSpec | None]]:
    """Gate -> minor -> its spec there (None: the binaries of that minor do not know it)."""
    table: dict[str, dict[int, GateSpec | None]] = {gate: {} for gate in GATE_READERS}
    current: dict[str, GateSpec | None] = dict.fromkeys(GATE_READERS)
    for minor in SUPPORTED_MINORS:
        row = _BY_MINOR[minor]
        current.update(row.gates)
        current.update(dict.fromkeys(row.removed_gates))
        for gate, spec in current.items():
            table[gate][minor] = spec
    return table


_GATES = _gate_table()


def gate_spec(gate: str, minor: int) -> GateSpec | None:
    """The spec of ``gate`` in 1.<minor> (a supported minor); None when that release does not know it."""
    return _GATES.get(gate, {}).get(minor)


def gate_default(gate: str, minor: int) -> bool | None:
    """Default of ``gate`` in 1.<minor>; None when the gate does not exist there."""
    spec = gate_spec(gate, minor)
    return None if spec is None else spec.default


def removed_in(gate: str) -> int | None:
    """The first supported minor whose binaries no longer know ``gate``, if any."""
    return next((row.minor for row in RELEASES if gate in row.removed_gates), None)


def gate_problems(overrides: Mapping[str, bool], minor: int) -> list[str]:
    """What a 1.<minor> binary says about ``--feature-gates`` it refuses (removed or locked gates).

    A gate this table does not list is not judged: limitguard lists only the gates it reads."""
    problems: list[str] = []
    for gate, value in sorted(overrides.items()):
        removed = removed_in(gate)
        if removed is not None and minor >= removed:
            problems.append(f"unrecognized feature gate: {gate} (removed in Kubernetes 1.{removed})")
            continue
        spec = gate_spec(gate, minor)
        if spec is not None and spec.locked and value != spec.default:
            problems.append(
                f"cannot set feature gate {gate} to {str(value).lower()}, feature is locked to "
                f"{str(spec.default).lower()} in Kubernetes 1.{minor}"
            )
    return problems


def change_since(change: str) -> int:
    """The first minor with the behaviour ``change`` names (a ``MinorRelease.changes`` key)."""
    for row in RELEASES:
        if change in row.changes:
            return row.minor
    raise KeyError(change)


def has_change(change: str, minor: int) -> bool:
    """Whether 1.<minor> has the behaviour ``change`` names."""
    return minor >= change_since(change)
