"""What a Kubernetes release's kube-scheduler knows: served API versions, feature gates, plugins.

limitguard validates for one chosen release (``--kubernetes-version``, default the newest supported
minor). Sources (read at the release tags; facts only): pkg/scheduler/apis/config/v1/default_plugins.go,
pkg/scheduler/apis/config/validation/validation.go (invalidPluginsByVersion),
pkg/scheduler/framework/plugins/registry.go, pkg/features/kube_features.go and
staging/src/k8s.io/kube-scheduler/config/v1/types.go.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

SUPPORTED_MINORS: tuple[int, ...] = (31, 32, 33, 34, 35)
DEFAULT_MINOR = SUPPORTED_MINORS[-1]

#: Config API version -> first minor whose kube-scheduler no longer serves it.
API_REMOVED_IN: dict[str, int] = {"v1beta2": 28, "v1beta3": 29}

#: Feature gate -> [(first minor, default)], the gates the validation or defaulting depends on.
_GATES: dict[str, tuple[tuple[int, bool], ...]] = {
    "DynamicResourceAllocation": ((26, False), (34, True)),
    "DRASchedulerFilterTimeout": ((34, True),),
    "DRAResourceClaimDeviceStatus": ((32, False), (33, True)),
    "DRADeviceBindingConditions": ((34, False),),
    "VolumeCapacityPriority": ((21, False),),
    "StorageCapacityScoring": ((33, False),),
    "GangScheduling": ((35, False),),
}
KNOWN_GATES = frozenset(_GATES)


class ReleaseError(ValueError):
    """An unsupported --kubernetes-version or a malformed --feature-gates value."""


def gate_default(gate: str, minor: int) -> bool | None:
    """Default of ``gate`` in release 1.<minor>; None when the gate does not exist there."""
    value: bool | None = None
    for since, default in _GATES.get(gate, ()):
        if minor >= since:
            value = default
    return value


@dataclass(frozen=True)
class Release:
    """One kube-scheduler release with its feature gates (defaults plus --feature-gates overrides)."""

    minor: int = DEFAULT_MINOR
    overrides: Mapping[str, bool] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"1.{self.minor}"

    def enabled(self, gate: str) -> bool:
        if gate in self.overrides:
            return bool(self.overrides[gate])
        return bool(gate_default(gate, self.minor))

    def serves(self, config_version: str) -> bool:
        removed = API_REMOVED_IN.get(config_version)
        return removed is None or self.minor < removed


DEFAULT_RELEASE = Release()


def parse_version(text: str) -> int:
    """The minor of ``1.33``, ``v1.33`` or ``v1.33.2`` (a /version gitVersion); ReleaseError otherwise."""
    match = re.fullmatch(r"v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?", text.strip())
    supported = ", ".join(f"1.{m}" for m in SUPPORTED_MINORS)
    if not match:
        raise ReleaseError(f"invalid Kubernetes version {text!r}: expected X.Y such as 1.{DEFAULT_MINOR}")
    minor = int(match.group(1))
    if minor not in SUPPORTED_MINORS:
        raise ReleaseError(f"Kubernetes version {text!r} is not supported; supported: {supported}")
    return minor


def parse_feature_gates(text: str | None) -> dict[str, bool]:
    """``A=true,B=false`` (kube-scheduler's --feature-gates syntax) as a dict."""
    gates: dict[str, bool] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or value.strip().lower() not in ("true", "false"):
            raise ReleaseError(f"invalid feature gate {item.strip()!r}: expected Name=true or Name=false")
        gates[name.strip()] = value.strip().lower() == "true"
    return gates


def release_for(version: str | None = None, feature_gates: str | Mapping[str, bool] | None = None) -> Release:
    """A Release from CLI-style strings (None -> the default minor)."""
    minor = parse_version(version) if version else DEFAULT_MINOR
    gates = (
        parse_feature_gates(feature_gates) if isinstance(feature_gates, str | None) else dict(feature_gates)
    )
    return Release(minor, gates)
