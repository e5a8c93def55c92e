"""The scheduler that reads the file: kube-scheduler, or one build of koord-scheduler or scheduler-plugins.

Each out-of-tree scheduler build is kube-scheduler's code at one Kubernetes minor plus its own plugins and
args kinds, so a configuration is judged by the in-tree rules of *that* minor (koord-scheduler v1.8.0 is
built on Kubernetes 1.35 whatever the cluster runs), its own registry of args kinds and its own plugins'
extension points. The builds are the projects' tables (``args.koordinator`` and ``args.sigs``, oldest
first); a scheduler is named ``NAME`` (its newest release) or ``NAME@VERSION``. Detection reads the
plugins a configuration names and decides only on plugins exactly one project registers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from limitguard.core.kubeversion import NEWEST_MINOR, OLDEST_MINOR
from limitguard.core.text import clip
from limitguard.errors import LimitguardError

from .args import koordinator
from .args import sigs as scheduler_plugins
from .args.builds import Build
from .args.common import KOORD_SCHEDULER, SCHEDULER_PLUGINS, as_dict, as_list
from .args.kind import ArgsKind
from .args.registry import IN_TREE_KINDS, LIMITGUARD_KINDS, Registry, build_registry
from .rules.plugin_tables import added_in, in_tree_plugins, removal_hint
from .rules.releases import Release

KUBE_SCHEDULER = "kube-scheduler"
AUTO = "auto"


@dataclass(frozen=True)
class Scheduler:
    """One scheduler build as it reads a KubeSchedulerConfiguration at start-up."""

    name: str
    #: The build whose tables apply (None: kube-scheduler, whose release is the cluster's).
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

    @property
    def release(self) -> str | None:
        """``v1.8.0``, ``main (903da7df)``; None for kube-scheduler."""
        return None if self.build is None else self.build.name

    @property
    def kubernetes_minor(self) -> int | None:
        return None if self.build is None else self.build.kubernetes_minor

    @property
    def kinds(self) -> tuple[ArgsKind, ...]:
        return LIMITGUARD_KINDS if self.build is None else self.build.kinds

    @property
    def plugins(self) -> Mapping[str, frozenset[str]]:
        return {} if self.build is None else self.build.plugins

    @property
    def spec(self) -> str:
        """How ``--scheduler`` names it: ``koord-scheduler@v1.8.0``."""
        return self.name if self.build is None else f"{self.name}@{self.build.version}"

    @property
    def label(self) -> str:
        return self.name if self.build is None else f"{self.name} {self.build.name}"

    def release_for(self, cluster: Release) -> Release:
        """The Release its in-tree rules are those of: its own minor (the nearest limitguard tables for
        one outside them), else the cluster's."""
        minor = self.kubernetes_minor
        if minor is None or minor == cluster.minor:
            return replace(cluster, scheduler=self.spec, build=self.build)
        minor = min(max(minor, OLDEST_MINOR), NEWEST_MINOR)
        return Release(minor, dict(cluster.overrides), cluster.note, scheduler=self.spec, build=self.build)

    def first_with(self, has: Callable[[Build], bool]) -> Build | None:
        """The oldest build of this project for which ``has(build)`` holds (None: none does)."""
        return next((b for b in self.builds if b is not self.build and has(b)), None)


_LIMIT_AWARE = {
    "LimitAware": "no koord-scheduler build registers LimitAware (it exists in Koordinator PR #1486 only): "
    "judged as a build carrying that change"
}


def _project(
    name: str,
    builds: tuple[Build, ...],
    markers: frozenset[str],
    missing: Callable[[Build], Mapping[str, Mapping[str, str]]],
    **extra: Any,
) -> dict[str, Scheduler]:
    """A project's builds by spec, each knowing the fields its later builds added."""
    return {f"{name}@{b.version}": Scheduler(name, b, markers, builds, missing(b), **extra) for b in builds}


def _plugins_of(builds: tuple[Build, ...]) -> frozenset[str]:
    return frozenset(name for build in builds for name in build.plugins)


_KOORDINATOR_ONLY = _plugins_of(koordinator.BUILDS) - {"Coscheduling"}
_SIGS_ONLY = _plugins_of(scheduler_plugins.BUILDS) - _plugins_of(koordinator.BUILDS)

#: Every build by its spec (``koord-scheduler@v1.8.0``); kube-scheduler by its name.
BUILDS: dict[str, Scheduler] = {
    KUBE_SCHEDULER: Scheduler(KUBE_SCHEDULER, None, frozenset()),
    **_project(
        KOORD_SCHEDULER,
        koordinator.BUILDS,
        _KOORDINATOR_ONLY,
        koordinator.missing_fields,
        dominant_by_design=frozenset({"Reservation"}),
        unreleased=_LIMIT_AWARE,
    ),
    **_project(SCHEDULER_PLUGINS, scheduler_plugins.BUILDS, _SIGS_ONLY, scheduler_plugins.missing_fields),
}
#: Each scheduler by its name, at its newest release (what a name without ``@VERSION`` means).
SCHEDULERS: dict[str, Scheduler] = {
    KUBE_SCHEDULER: BUILDS[KUBE_SCHEDULER],
    KOORD_SCHEDULER: BUILDS[f"{KOORD_SCHEDULER}@{koordinator.NEWEST_RELEASE.version}"],
    SCHEDULER_PLUGINS: BUILDS[f"{SCHEDULER_PLUGINS}@{scheduler_plugins.NEWEST_RELEASE.version}"],
}
CHOICES: tuple[str, ...] = (*SCHEDULERS, AUTO)
#: What ``--scheduler``, the annotation and the server setting accept (a version is checked separately).
CHOICE_PATTERN = r"^(auto|(kube-scheduler|koord-scheduler|scheduler-plugins)(@[A-Za-z0-9][-A-Za-z0-9._+]*)?)$"
#: Other names of a version: scheduler-plugins calls its development branch master.
_VERSION_ALIASES = {"master": "main"}


class SchedulerChoiceError(LimitguardError, ValueError):
    """A scheduler name limitguard does not know, or a version of it that it has no table for."""


def resolve(text: str) -> Scheduler | None:
    """The scheduler ``text`` names (None: auto); SchedulerChoiceError when unknown."""
    if text == AUTO:
        return None
    if not re.fullmatch(CHOICE_PATTERN, text):
        raise SchedulerChoiceError(
            f"unknown scheduler {json.dumps(clip(text))}: expected NAME or NAME@VERSION, NAME one of "
            f"{', '.join(SCHEDULERS)} (or {AUTO})"
        )
    name, _, version = text.partition("@")
    newest = SCHEDULERS[name]
    if not version:
        return newest
    wanted = _VERSION_ALIASES.get(version, version)
    for build in newest.builds:
        if build.version.removeprefix("v") == wanted.removeprefix("v"):
            return BUILDS[f"{name}@{build.version}"]
    if newest.build is None:
        raise SchedulerChoiceError(
            f"{json.dumps(clip(text))}: kube-scheduler has no @VERSION: its release is the Kubernetes "
            "version (--kubernetes-version)"
        )
    known = ", ".join(f"{name}@{b.version}" for b in newest.builds)
    raise SchedulerChoiceError(
        f"{json.dumps(clip(text))}: limitguard has no table for this build (known: {known}; {name} alone "
        f"is the newest release, {newest.build.version})"
    )


def resolve_leniently(text: str) -> tuple[Scheduler | None, str | None]:
    """For a server, which must keep answering: an unknown version of a known scheduler is its newest
    release, with a note saying so; an unknown name still raises SchedulerChoiceError."""
    try:
        return resolve(text), None
    except SchedulerChoiceError:
        name = text.partition("@")[0]
        if name not in SCHEDULERS or not re.fullmatch(CHOICE_PATTERN, text):
            raise
        newest = SCHEDULERS[name]
        if newest.build is None:
            return (
                newest,
                f"{clip(text)}: kube-scheduler has no @VERSION (its release is the Kubernetes version)",
            )
        known = ", ".join(b.version for b in newest.builds)
        return newest, f"{clip(text)}: unknown build, {newest.build.version} applies (known: {known})"


def scheduler_of(release: Release) -> Scheduler:
    """The scheduler a Release is validated for (its ``scheduler`` spec)."""
    return BUILDS.get(release.scheduler) or SCHEDULERS.get(release.scheduler) or SCHEDULERS[KUBE_SCHEDULER]


def registered_plugins(release: Release) -> dict[str, frozenset[str] | None]:
    """Every plugin the reading scheduler registers: the in-tree ones of its minor, then its own."""
    return {**in_tree_plugins(release), **scheduler_of(release).plugins}


def reader_label(release: Release) -> str:
    """How messages name the reading scheduler: ``kube-scheduler 1.37``, ``koord-scheduler v1.8.0
    (Kubernetes 1.35)``; a build on a minor limitguard has no tables for says whose rules apply."""
    scheduler = scheduler_of(release)
    if scheduler.build is None:
        return f"{scheduler.name} {release.name}"
    if scheduler.build.kubernetes_minor != release.minor:
        built_on = f"1.{scheduler.build.kubernetes_minor}"
        return f"{scheduler.label} (Kubernetes {built_on}, judged by the rules of {release.name})"
    return f"{scheduler.label} (Kubernetes {release.name})"


def owners(plugin: str) -> list[str]:
    """The out-of-tree schedulers any build of which registers ``plugin``."""
    return [s.name for s in SCHEDULERS.values() if plugin in _plugins_of(s.builds)]


def choose_hint(scheduler: Scheduler, build: Build) -> str:
    """``--scheduler NAME@VERSION`` for another build of ``scheduler``'s project."""
    return (
        f"choose it with --scheduler {scheduler.name}@{build.version} (or the limitguard.io/scheduler "
        "annotation)"
    )


def elsewhere(release: Release, has: Callable[[Build], bool], what: str) -> str:
    """``; scheduler-plugins main (903da7df) has <what>: choose it with ...`` when another build of the
    reading scheduler's project has it (``has(build)``), else empty."""
    scheduler = scheduler_of(release)
    build = scheduler.first_with(has)
    if build is None:
        return ""
    return f"; {scheduler.name} {build.name} has {what}: {choose_hint(scheduler, build)}"


@cache
def _registry(spec: str) -> Registry:
    return build_registry(IN_TREE_KINDS + BUILDS[spec].kinds)


def registry_for(release: Release) -> Registry:
    """The args kinds the reading scheduler decodes: kube-scheduler's and its own."""
    return _registry(scheduler_of(release).spec)


# ------------------------------------------------------------------------------------------- detection
@dataclass(frozen=True)
class Detection:
    """Which scheduler a configuration is judged for, and why; ``certain`` is False when guessed."""

    scheduler: Scheduler
    reason: str
    certain: bool = True


def named_plugins(config: Mapping[str, Any]) -> list[str]:
    """Plugins a configuration names (enabled anywhere, or configured), in order, without repeats."""
    names: dict[str, None] = {}
    for profile in as_list(config.get("profiles")):
        profile = as_dict(profile)
        for plugin_set in as_dict(profile.get("plugins")).values():
            for plugin in as_list(as_dict(plugin_set).get("enabled")):
                name = as_dict(plugin).get("name")
                if isinstance(name, str):
                    names.setdefault(name)
        for entry in as_list(profile.get("pluginConfig")):
            name = as_dict(entry).get("name")
            if isinstance(name, str):
                names.setdefault(name)
    return list(names)


def _listed(names: list[str]) -> str:
    """At most four names, each clipped: they come from the input, which anyone may write."""
    shown = ", ".join(json.dumps(clip(n)) for n in names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


FLAG_HINT = "name it with --scheduler (or the limitguard.io/scheduler annotation)"


def _newest(scheduler: Scheduler) -> str:
    """What detection says of the build it takes: the newest release, and how to choose another."""
    return (
        f"its newest release {scheduler.release} applies (name another build with --scheduler "
        f"{scheduler.name}@VERSION)"
    )


def detect(config: Mapping[str, Any], cluster: Release) -> Detection:
    """The scheduler a configuration is written for, from the plugins only one project registers."""
    names = named_plugins(config)
    # kube-scheduler's names, those of other releases included (a removed plugin is its error to report)
    in_tree = set(in_tree_plugins(cluster)) | {
        n for n in names if removal_hint(n, cluster) is not None or added_in(n) is not None
    }
    hits = {s.name: [n for n in names if n in s.markers] for s in SCHEDULERS.values() if s.markers}
    found = {name: marks for name, marks in hits.items() if marks}
    if len(found) == 1:
        ((name, marks),) = found.items()
        scheduler = SCHEDULERS[name]
        return Detection(
            scheduler, f"names {_listed(marks)}, registered only by {scheduler.name}; {_newest(scheduler)}"
        )
    if len(found) > 1:
        name = max(found, key=lambda n: len(found[n]))
        described = "; ".join(f"{n}: {_listed(m)}" for n, m in found.items())
        return Detection(
            SCHEDULERS[name],
            f"names plugins of more than one scheduler ({described}): judged for {name}, "
            f"{_newest(SCHEDULERS[name])}; {FLAG_HINT}",
            certain=False,
        )
    kube = SCHEDULERS[KUBE_SCHEDULER]
    shared = [n for n in names if n not in in_tree and len(owners(n)) > 1]
    unknown = [n for n in names if n not in in_tree and n not in shared]
    if shared or unknown:
        parts = []
        if shared:
            parts.append(f"{_listed(shared)}: registered by more than one scheduler")
        if unknown:
            parts.append(f"{_listed(unknown)}: registered by no scheduler limitguard knows")
        return Detection(kube, f"{'; '.join(parts)}: judged for kube-scheduler; {FLAG_HINT}", certain=False)
    return Detection(kube, "every plugin it names is in-tree")


def choose(
    config: Mapping[str, Any], choice: str, cluster: Release, named_by: str = "--scheduler"
) -> Detection:
    """The scheduler for ``config``: the one ``choice`` (``NAME[@VERSION]``) names (``named_by`` says
    where), or detected when ``choice`` is auto."""
    scheduler, _ = resolve_leniently(choice)  # an unknown version was reported where it was read
    if scheduler is None:
        return detect(config, cluster)
    return Detection(scheduler, f"named by {named_by}")


__all__ = [
    "AUTO",
    "BUILDS",
    "CHOICES",
    "CHOICE_PATTERN",
    "FLAG_HINT",
    "KOORD_SCHEDULER",
    "KUBE_SCHEDULER",
    "SCHEDULERS",
    "SCHEDULER_PLUGINS",
    "Detection",
    "Scheduler",
    "SchedulerChoiceError",
    "choose",
    "choose_hint",
    "detect",
    "elsewhere",
    "named_plugins",
    "owners",
    "reader_label",
    "registered_plugins",
    "registry_for",
    "resolve",
    "resolve_leniently",
    "scheduler_of",
]
