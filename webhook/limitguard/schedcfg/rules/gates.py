"""kube-scheduler feature gates by release: the versioned gate specs validation and defaulting read.

Each gate is a list of (first minor, default, locked) steps, as pkg/features/kube_features.go declares
them with ``VersionedSpecs`` (a step applies from its minor on), plus the minor whose binary no longer
knows the gate at all. component-base refuses ``--feature-gates`` naming a gate the binary does not
know, and setting a gate locked to its default to the other value; limitguard refuses the same.

Read at: the scheduler's versioned gate table of the kubernetes 1.38 development line (it keeps every
step back to each gate's alpha), cross-checked against kubernetes/kube-scheduler tags v0.35.7, v0.36.3
and v0.37.0-beta.0. Gates only listed here if a validation or defaulting rule depends on them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GateStep:
    since: int
    default: bool
    locked: bool = False


def _steps(*steps: tuple[int, bool] | tuple[int, bool, bool]) -> tuple[GateStep, ...]:
    return tuple(GateStep(*step) for step in steps)


#: Gate -> its steps. DynamicResourceAllocation: GA 1.34, locked 1.35.
GATE_STEPS: dict[str, tuple[GateStep, ...]] = {
    "DynamicResourceAllocation": _steps((26, False), (34, True), (35, True, True)),
    "DRASchedulerFilterTimeout": _steps((34, True)),
    "DRAResourceClaimDeviceStatus": _steps((32, False), (33, True), (37, True, True)),
    "DRADeviceBindingConditions": _steps((34, False), (36, True)),
    "VolumeCapacityPriority": _steps((21, False)),
    "StorageCapacityScoring": _steps((33, False), (37, True)),
    "GangScheduling": _steps((35, False)),
    "GenericWorkload": _steps((35, False)),
    "TopologyAwareWorkloadScheduling": _steps((36, False)),
    "NodeDeclaredFeatures": _steps((35, False), (36, True), (37, True, True)),
}

#: Gate -> first minor whose kube-scheduler no longer knows it (naming it then fails start-up).
GATE_REMOVED_IN: dict[str, int] = {
    "VolumeCapacityPriority": 33,  # renamed StorageCapacityScoring
    "GangScheduling": 37,
}

KNOWN_GATES = frozenset(GATE_STEPS)


def gate_step(gate: str, minor: int) -> GateStep | None:
    """The spec of ``gate`` in release 1.<minor>; None when the gate does not exist there."""
    removed = GATE_REMOVED_IN.get(gate)
    if removed is not None and minor >= removed:
        return None
    current: GateStep | None = None
    for step in GATE_STEPS.get(gate, ()):
        if minor >= step.since:
            current = step
    return current


def gate_default(gate: str, minor: int) -> bool | None:
    """Default of ``gate`` in release 1.<minor>; None when the gate does not exist there."""
    step = gate_step(gate, minor)
    return None if step is None else step.default


def gate_problems(overrides: dict[str, bool], minor: int) -> list[str]:
    """What kube-scheduler 1.<minor> says about ``--feature-gates`` it refuses (removed or locked gates)."""
    problems: list[str] = []
    for gate, value in sorted(overrides.items()):
        removed = GATE_REMOVED_IN.get(gate)
        if removed is not None and minor >= removed:
            problems.append(f"unrecognized feature gate: {gate} (removed in Kubernetes 1.{removed})")
            continue
        step = gate_step(gate, minor)
        if step is not None and step.locked and value != step.default:
            problems.append(
                f"cannot set feature gate {gate} to {str(value).lower()}, feature is locked to "
                f"{str(step.default).lower()} in Kubernetes 1.{minor}"
            )
    return problems
