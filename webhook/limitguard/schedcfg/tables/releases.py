"""A Kubernetes release as kube-scheduler runs it: the minor, the feature gates, the API versions served.

limitguard validates for one release at a time; which one is ``limitguard.core.kuberelease``'s answer
(``--kubernetes-version``, the configuration, the cluster, a scheduler build's own minor). The supported minors and version parsing are ``limitguard.core.kubeversion``'s (one table for
every layer); the gates and the rule changes made without a gate are the one release table's
(``limitguard.core.kubefeatures``), plugins and extension points in ``plugin_tables``. Sources
(facts only): pkg/scheduler/apis/config/validation/*.go, pkg/scheduler/apis/config/v1/default_plugins.go,
pkg/features/kube_features.go and kubernetes/kube-scheduler config/v1/types.go; docs/versions.md says
which tag each rule was read at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from limitguard.core.kubefeatures import (
    SCHEDULER_CONFIGURATION,
    gate_default,
    gate_problems,
    gates_read_by,
    has_change,
)
from limitguard.core.kubeversion import (
    DEFAULT_MINOR,
    SUPPORTED_MINORS,
    VersionError,
    supported_minor,
)

__all__ = [
    "API_REMOVED_IN",
    "DEFAULT_MINOR",
    "DEFAULT_RELEASE",
    "KNOWN_GATES",
    "SUPPORTED_MINORS",
    "Release",
    "ReleaseError",
    "gate_default",
    "kube_scheduler_release",
    "parse_feature_gates",
    "parse_version",
    "reader_gates",
]

#: An unsupported --kubernetes-version or a --feature-gates value kube-scheduler refuses.
ReleaseError = VersionError

#: Config API version -> first minor whose kube-scheduler no longer serves it.
API_REMOVED_IN: dict[str, int] = {"v1beta2": 28, "v1beta3": 29}

#: The feature gates validation and defaulting read (limitguard.core.kubefeatures lists their stages).
KNOWN_GATES = gates_read_by(SCHEDULER_CONFIGURATION)


@dataclass(frozen=True)
class Release:
    """One Kubernetes release of kube-scheduler's code with its feature gates (defaults plus
    --feature-gates overrides).

    ``note`` says why this release was chosen when it is not the one asked for (a server judges a
    cluster version outside the supported range as the nearest one and says so in every verdict).
    Which scheduler build reads the file is not part of it: ``tables.readers.Reader`` pairs the two.
    """

    minor: int = DEFAULT_MINOR
    overrides: Mapping[str, bool] = field(default_factory=dict)
    note: str | None = None

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

    def has(self, change: str) -> bool:
        """Whether this release has the behaviour ``change`` names (a change without a gate in
        limitguard.core.kubefeatures)."""
        return has_change(change, self.minor)


DEFAULT_RELEASE = Release()


def parse_version(text: str) -> int:
    """The minor of ``1.33``, ``v1.33`` or ``v1.33.2``; ReleaseError outside the supported range."""
    return supported_minor(text)


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


def release_with_gates(
    minor: int, feature_gates: str | Mapping[str, bool] | None, note: str | None = None
) -> Release:
    """Release 1.<minor> with ``feature_gates``; ReleaseError for gates kube-scheduler 1.<minor> refuses."""
    gates = (
        parse_feature_gates(feature_gates) if isinstance(feature_gates, str | None) else dict(feature_gates)
    )
    problems = gate_problems(gates, minor)
    if problems:
        raise ReleaseError("; ".join(problems))
    return Release(minor, gates, note)


def kube_scheduler_release(
    version: str | None = None, feature_gates: str | Mapping[str, bool] | None = None
) -> Release:
    """kube-scheduler's Release from CLI-style strings (None -> the default minor); ReleaseError when
    the version is unsupported or the release refuses a gate (a setting the operator chose)."""
    return release_with_gates(supported_minor(version) if version else DEFAULT_MINOR, feature_gates)


def reader_gates(release: Release) -> tuple[Release, list[str]]:
    """``release`` keeping only the --feature-gates its own minor accepts, and what that minor refuses.

    Gates are judged by the scheduler that reads the file, at its Kubernetes minor (koord-scheduler v1.8
    is component-base 1.35 whatever the cluster runs): ``release`` is that minor's, and what it refuses
    would stop that scheduler at start-up."""
    kept: dict[str, bool] = {}
    problems: list[str] = []
    for gate, value in release.overrides.items():
        found = gate_problems({gate: value}, release.minor)
        if found:
            problems += found
        else:
            kept[gate] = value
    return (replace(release, overrides=kept) if problems else release), problems
