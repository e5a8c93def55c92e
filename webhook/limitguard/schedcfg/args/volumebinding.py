"""VolumeBindingArgs: ``shape`` exists only behind a feature gate.

StorageCapacityScoring (1.33+; VolumeCapacityPriority before) is alpha and off by default up to 1.36,
beta and on from 1.37. With the gate off kube-scheduler rejects any ``shape`` with one error on ``shape``
(it does not look at the points); with it on, the shape must be valid, and an empty one is replaced by
the gate's default shape ({0, 10}, {100, 0} from 1.33: empty nodes score high).
"""

from __future__ import annotations

from typing import Any

from limitguard.core.kubefeatures import gate_spec
from limitguard.core.paths import path_join

from ..fields.findings import Finding, invalid
from ..tables.readers import Reader
from .common import check_shape, check_shape_ranges
from .kind import ArgsKind


def capacity_gate(reader: Reader) -> str:
    return (
        "StorageCapacityScoring"
        if reader.release.has("volume-binding.storage-capacity-scoring")
        else "VolumeCapacityPriority"
    )


def default(args: dict[str, Any], _path: str, reader: Reader) -> list[Finding]:
    args.setdefault("bindTimeoutSeconds", 600)
    if not args.get("shape") and reader.release.enabled(capacity_gate(reader)):
        high_first = reader.release.has("volume-binding.storage-capacity-scoring")
        args["shape"] = [
            {"utilization": 0, "score": 10 if high_first else 0},
            {"utilization": 100, "score": 0 if high_first else 10},
        ]
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    gate = capacity_gate(reader)
    shape_path = path_join(path, "shape")
    if reader.release.enabled(gate):
        return check_shape(args.get("shape"), shape_path) + check_shape_ranges(args.get("shape"), shape_path)
    if args.get("shape") is not None:
        step = gate_spec(gate, reader.release.minor)
        stage = "on" if step is not None and step.default else "off"
        return [
            invalid(
                shape_path,
                args["shape"],
                f"unexpected field `shape`, remove it or turn on the feature gate {gate} "
                f"({stage} by default in Kubernetes {reader.release.name})",
                "volume-binding.feature-gate",
            )
        ]
    return []


ARGS = ArgsKind("VolumeBindingArgs", "VolumeBinding", validate, default)
