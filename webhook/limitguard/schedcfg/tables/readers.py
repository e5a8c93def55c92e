"""The scheduler that reads a configuration, and the Kubernetes release its in-tree code is.

kube-scheduler is the Kubernetes release itself (``kube-scheduler@v1.33.0`` names 1.33). An out-of-tree
scheduler build (koord-scheduler, scheduler-plugins: ``tables.builds``) is kube-scheduler's code at one
Kubernetes minor plus its own plugins and args kinds, so a configuration is judged by the in-tree rules
of *that* minor (koord-scheduler v1.8.0 is built on Kubernetes 1.35 whatever the cluster runs). A
``Reader`` pairs the two, and it is what every rule is given: the release's gates and minor, and the
build whose plugins, fields and name the findings use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from limitguard.core.kuberelease import BuiltOn, resolve_release

from .builds import Build
from .plugin_tables import in_tree_plugins
from .releases import DEFAULT_RELEASE, Release

#: The schedulers as findings and ``--scheduler`` name them.
KUBE_SCHEDULER = "kube-scheduler"
KOORD_SCHEDULER = "koord-scheduler"
SCHEDULER_PLUGINS = "scheduler-plugins"


@dataclass(frozen=True)
class Scheduler:
    """One scheduler binary as it reads a KubeSchedulerConfiguration at start-up."""

    name: str
    #: The out-of-tree build whose tables apply (None: kube-scheduler).
    build: Build | None
    #: Plugins of this project only (any build): naming one shows the file is written for it.
    markers: frozenset[str]
    #: The project's builds, oldest first (where a name this build lacks is found).
    builds: tuple[Build, ...] = ()
    #: Top-level args fields later builds added: kind -> field -> the first tag having it.
    missing_fields: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Score plugins whose dominating weight is the project's design (a reserved node must win).
    dominant_by_design: frozenset[str] = frozenset()
    #: Plugins this table knows but no build registers, with why they are judged anyway.
    unreleased: Mapping[str, str] = field(default_factory=dict)
    #: kube-scheduler named at a version (``kube-scheduler@v1.33.0``): the version as written, and its
    #: Kubernetes minor. None: kube-scheduler of the release chosen elsewhere.
    version: str | None = None
    pinned_minor: int | None = None

    @property
    def build_name(self) -> str | None:
        """``v1.8.0``, ``main (903da7df)``; None for kube-scheduler."""
        return None if self.build is None else self.build.name

    @property
    def kubernetes_minor(self) -> int | None:
        """The Kubernetes minor its in-tree code is (None: the release chosen elsewhere applies)."""
        return self.pinned_minor if self.build is None else self.build.kubernetes_minor

    @property
    def plugins(self) -> Mapping[str, frozenset[str]]:
        return {} if self.build is None else self.build.plugins

    @property
    def spec(self) -> str:
        """How ``--scheduler`` names it: ``koord-scheduler@v1.8.0``, ``kube-scheduler@v1.33.0``."""
        if self.build is not None:
            return f"{self.name}@{self.build.version}"
        return self.name if self.version is None else f"{self.name}@{self.version}"

    @property
    def label(self) -> str:
        if self.build is not None:
            return f"{self.name} {self.build.name}"
        return self.name if self.version is None else f"{self.name} {self.version}"

    def reader_for(self, release: Release) -> Reader:
        """This scheduler reading at its own Kubernetes minor (the nearest limitguard has tables for,
        through the release resolver), else at ``release``; ``release``'s gates and note are kept."""
        minor = self.kubernetes_minor
        if minor is None or minor == release.minor:
            return Reader(release, self)
        kubernetes, _ = resolve_release(build=BuiltOn(self.label, minor))
        return Reader(Release(kubernetes.minor, dict(release.overrides), release.note), self)

    def first_with(self, has: Callable[[Build], bool]) -> Build | None:
        """The oldest build of this project for which ``has(build)`` holds (None: none does)."""
        return next((b for b in self.builds if b is not self.build and has(b)), None)


def choose_hint(scheduler: Scheduler, build: Build) -> str:
    """``--scheduler NAME@VERSION`` for another build of ``scheduler``'s project."""
    return (
        f"choose it with --scheduler {scheduler.name}@{build.version} (or the limitguard.io/scheduler "
        "annotation)"
    )


@dataclass(frozen=True)
class Reader:
    """A scheduler reading a configuration at one Kubernetes release (with its feature gates)."""

    release: Release
    scheduler: Scheduler

    @property
    def label(self) -> str:
        """How messages name the reader: ``kube-scheduler 1.37``, ``koord-scheduler v1.8.0 (Kubernetes
        1.35)``; a build on a minor limitguard has no tables for says whose rules apply."""
        scheduler = self.scheduler
        if scheduler.build is None:
            return f"{scheduler.name} {self.release.name}"
        if scheduler.build.kubernetes_minor != self.release.minor:
            built_on = f"1.{scheduler.build.kubernetes_minor}"
            return f"{scheduler.label} (Kubernetes {built_on}, judged by the rules of {self.release.name})"
        return f"{scheduler.label} (Kubernetes {self.release.name})"

    def scheduler_label(self, project: str) -> str:
        """How a rule of ``project`` names the build it judges for: ``koord-scheduler v1.7.0``,
        ``scheduler-plugins main (903da7df)``; the project alone when the reader is not one of its
        builds (a rule called outside the validator)."""
        if self.scheduler.build is None or self.scheduler.name != project:
            return project
        return self.scheduler.label

    def registered_plugins(self) -> dict[str, frozenset[str] | None]:
        """Every plugin the reader registers: the in-tree ones of its release, then its own."""
        return {**in_tree_plugins(self.release), **self.scheduler.plugins}

    def elsewhere(self, has: Callable[[Build], bool], what: str) -> str:
        """``; scheduler-plugins main (903da7df) has <what>: choose it with ...`` when another build of
        the reader's project has it (``has(build)``), else empty."""
        build = self.scheduler.first_with(has)
        if build is None:
            return ""
        return f"; {self.scheduler.name} {build.name} has {what}: {choose_hint(self.scheduler, build)}"


#: kube-scheduler of the release chosen elsewhere (the in-tree rules alone).
IN_TREE = Scheduler(KUBE_SCHEDULER, None, frozenset())


def in_tree_reader(release: Release) -> Reader:
    """kube-scheduler reading at ``release``."""
    return Reader(release, IN_TREE)


#: kube-scheduler of the newest supported release (the validator's default).
DEFAULT_READER = in_tree_reader(DEFAULT_RELEASE)


__all__ = [
    "DEFAULT_READER",
    "IN_TREE",
    "KOORD_SCHEDULER",
    "KUBE_SCHEDULER",
    "SCHEDULER_PLUGINS",
    "Reader",
    "Scheduler",
    "choose_hint",
    "in_tree_reader",
]
