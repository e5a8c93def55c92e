"""VolumeBindingArgs: ``shape`` exists only behind a feature gate.

StorageCapacityScoring (1.33+; VolumeCapacityPriority before) is alpha and off by default in every
supported release: with the gate off kube-scheduler rejects any ``shape``; with it on, the shape must be
valid, and an empty one is replaced by the gate's default shape.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..report import Finding, invalid
from ..rules.releases import Release
from .common import check_shape
from .kind import ArgsKind


def capacity_gate(release: Release) -> str:
    return "StorageCapacityScoring" if release.minor >= 33 else "VolumeCapacityPriority"


def default(args: dict[str, Any], _path: str, release: Release) -> list[Finding]:
    args.setdefault("bindTimeoutSeconds", 600)
    if not args.get("shape") and release.enabled(capacity_gate(release)):
        high_first = release.minor >= 33
        args["shape"] = [
            {"utilization": 0, "score": 10 if high_first else 0},
            {"utilization": 100, "score": 0 if high_first else 10},
        ]
    return []


def validate(args: dict[str, Any], path: str, release: Release) -> list[Finding]:
    gate = capacity_gate(release)
    shape_path = path_join(path, "shape")
    if release.enabled(gate):
        return check_shape(args.get("shape"), shape_path)
    if args.get("shape") is not None:
        return [
            invalid(
                shape_path,
                args["shape"],
                f"unexpected field `shape`, remove it or turn on the feature gate {gate} "
                f"(alpha, off by default in Kubernetes {release.name})",
                "volume-binding.feature-gate",
            )
        ]
    return []


ARGS = ArgsKind("VolumeBindingArgs", "VolumeBinding", validate, default)
