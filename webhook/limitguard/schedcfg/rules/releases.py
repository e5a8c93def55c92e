"""What a Kubernetes release's kube-scheduler knows: served API versions, feature gates, rule changes.

limitguard validates for one chosen release (``--kubernetes-version``, default the newest supported
minor). The supported minors and version parsing are ``limitguard.core.kubeversion``'s (one table for
every layer); the gates and the rule changes made without a gate are the one release table's
(``limitguard.core.kubefeatures``), plugins and extension points in ``plugin_tables``. Sources
(facts only): pkg/scheduler/apis/config/validation/*.go, pkg/scheduler/apis/config/v1/default_plugins.go,
pkg/features/kube_features.go and kubernetes/kube-scheduler config/v1/types.go; docs/versions.md says
which tag each rule was read at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from ..args.builds import Build

__all__ = [
    "API_REMOVED_IN",
    "DEFAULT_MINOR",
    "DEFAULT_RELEASE",
    "KNOWN_GATES",
    "SUPPORTED_MINORS",
    "Release",
    "ReleaseError",
    "gate_default",
    "parse_feature_gates",
    "parse_version",
    "reader_gates",
    "release_for",
]

#: An unsupported --kubernetes-version or a --feature-gates value kube-scheduler refuses.
ReleaseError = VersionError

#: Config API version -> first minor whose kube-scheduler no longer serves it.
API_REMOVED_IN: dict[str, int] = {"v1beta2": 28, "v1beta3": 29}

#: The feature gates validation and defaulting read (limitguard.core.kubefeatures lists their stages).
KNOWN_GATES = gates_read_by(SCHEDULER_CONFIGURATION)


@dataclass(frozen=True)
class Release:
    """One kube-scheduler release with its feature gates (defaults plus --feature-gates overrides).

    ``note`` says why this release was chosen when it is not the one asked for (a server clamps a
    cluster version outside the supported range to the nearest one and says so in every verdict).
    ``scheduler`` names the scheduler that reads the file (``limitguard.schedcfg.schedulers``): an
    out-of-tree one is kube-scheduler's code of this minor plus its own plugins and args kinds; ``build``
    is that scheduler's build, so every rule can name the binary it judges for.
    """

    minor: int = DEFAULT_MINOR
    overrides: Mapping[str, bool] = field(default_factory=dict)
    note: str | None = None
    scheduler: str = "kube-scheduler"
    build: Build | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return f"1.{self.minor}"

    def scheduler_label(self, project: str) -> str:
        """How a rule of ``project`` names the build it judges for: ``koord-scheduler v1.7.0``,
        ``scheduler-plugins main (903da7df)``; the project alone when no build of it was chosen (a rule
        called outside the validator)."""
        if self.build is None or self.scheduler.partition("@")[0] != project:
            return project
        return f"{project} {self.build.name}"

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


def release_for(version: str | None = None, feature_gates: str | Mapping[str, bool] | None = None) -> Release:
    """A Release from CLI-style strings (None -> the default minor); ReleaseError when unsupported."""
    return release_with_gates(supported_minor(version) if version else DEFAULT_MINOR, feature_gates)


def reader_gates(release: Release) -> tuple[Release, list[str]]:
    """``release`` keeping only the --feature-gates its own minor accepts, and what that minor refuses.

    Gates are judged by the scheduler that reads the file, at its Kubernetes minor (koord-scheduler v1.8
    is component-base 1.35 whatever the cluster runs): what it refuses would stop it at start-up."""
    kept: dict[str, bool] = {}
    problems: list[str] = []
    for gate, value in release.overrides.items():
        found = gate_problems({gate: value}, release.minor)
        if found:
            problems += found
        else:
            kept[gate] = value
    return (replace(release, overrides=kept) if problems else release), problems
