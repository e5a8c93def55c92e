"""Which scheduler reads a configuration: named (``--scheduler``, the annotation, the server setting) or
detected from the plugins it names.

The schedulers are kube-scheduler and each build of koord-scheduler and the scheduler-plugins scheduler
(``tables.readers``, ``args.projects``); a scheduler is named ``NAME`` (its newest build) or
``NAME@VERSION``. ``kube-scheduler@VERSION`` names the Kubernetes release itself (kube-scheduler's
version is Kubernetes'), so ``kube-scheduler@v1.33.0`` reads as 1.33 wherever it is named. Detection
reads the plugins a configuration names and decides only on plugins exactly one project registers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from limitguard.core.kubeversion import (
    NEWEST_MINOR,
    OLDEST_MINOR,
    VersionError,
    parse_minor,
    supported_minor,
    supported_text,
)
from limitguard.core.text import clip
from limitguard.errors import LimitguardError

from .args import koordinator
from .args import sigs as scheduler_plugins
from .args.projects import owners, plugins_of
from .fields.values import as_dict, as_list
from .tables.builds import Build
from .tables.plugin_tables import added_in, in_tree_plugins, removal_hint
from .tables.readers import IN_TREE, KOORD_SCHEDULER, KUBE_SCHEDULER, SCHEDULER_PLUGINS, Scheduler
from .tables.releases import Release, ReleaseError, kube_scheduler_release

AUTO = "auto"


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


_KOORDINATOR_ONLY = plugins_of(koordinator.BUILDS) - {"Coscheduling"}
_SIGS_ONLY = plugins_of(scheduler_plugins.BUILDS) - plugins_of(koordinator.BUILDS)

#: Every build by its spec (``koord-scheduler@v1.8.0``); kube-scheduler by its name.
BUILDS: dict[str, Scheduler] = {
    KUBE_SCHEDULER: IN_TREE,
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
#: Each scheduler by its name, at its newest build (what a name without ``@VERSION`` means).
SCHEDULERS: dict[str, Scheduler] = {
    KUBE_SCHEDULER: BUILDS[KUBE_SCHEDULER],
    KOORD_SCHEDULER: BUILDS[f"{KOORD_SCHEDULER}@{koordinator.NEWEST_BUILD.version}"],
    SCHEDULER_PLUGINS: BUILDS[f"{SCHEDULER_PLUGINS}@{scheduler_plugins.NEWEST_BUILD.version}"],
}
CHOICES: tuple[str, ...] = (*SCHEDULERS, AUTO)
#: What ``--scheduler``, the annotation and the server setting accept (a version is checked separately).
CHOICE_PATTERN = r"^(auto|(kube-scheduler|koord-scheduler|scheduler-plugins)(@[A-Za-z0-9][-A-Za-z0-9._+]*)?)$"
#: Other names of a version: scheduler-plugins calls its development branch master.
_VERSION_ALIASES = {"master": "main"}


class SchedulerChoiceError(LimitguardError, ValueError):
    """A scheduler name limitguard does not know, or a version of it that it has no table for."""


def resolve(text: str) -> Scheduler | None:
    """The scheduler ``text`` names (None: auto); SchedulerChoiceError when unknown, or for
    ``kube-scheduler@VERSION`` outside the supported Kubernetes releases."""
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
    if newest.build is None:
        return _kube_scheduler_at(text, version)
    wanted = _VERSION_ALIASES.get(version, version)
    for build in newest.builds:
        if build.version.removeprefix("v") == wanted.removeprefix("v"):
            return BUILDS[f"{name}@{build.version}"]
    known = ", ".join(f"{name}@{b.version}" for b in newest.builds)
    raise SchedulerChoiceError(
        f"{json.dumps(clip(text))}: limitguard has no table for this build (known: {known}; {name} alone "
        f"is the newest release, {newest.build.version})"
    )


def _kube_scheduler_at(text: str, version: str) -> Scheduler:
    """kube-scheduler of the Kubernetes release ``version`` names, as that binary reads a file."""
    try:
        minor = supported_minor(version)
    except VersionError as error:
        raise SchedulerChoiceError(
            f"{json.dumps(clip(text))}: kube-scheduler's version is the Kubernetes release: {error}"
        ) from None
    return replace(IN_TREE, version=version, pinned_minor=minor)


def _kube_scheduler_nearest(text: str) -> tuple[Scheduler, str]:
    """kube-scheduler at a version limitguard has no tables for: the nearest supported release's rules
    (a readable version), else the release chosen elsewhere; the note says which."""
    version = text.partition("@")[2]
    try:
        minor = parse_minor(version)
    except VersionError:
        return IN_TREE, f"{clip(text)}: not a Kubernetes version; the release configured applies"
    nearest = min(max(minor, OLDEST_MINOR), NEWEST_MINOR)
    pinned = replace(IN_TREE, version=version, pinned_minor=minor)
    return pinned, f"{clip(text)}: outside the supported {supported_text()}, the rules of 1.{nearest} apply"


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
        if newest.build is None:  # a release limitguard has no table for: the nearest one's rules
            return _kube_scheduler_nearest(text)
        known = ", ".join(b.version for b in newest.builds)
        return newest, f"{clip(text)}: unknown build, {newest.build.version} applies (known: {known})"


def setting_problems(
    kubernetes_version: str | None, feature_gates: Mapping[str, bool], scheduler: str | None
) -> list[tuple[str, str]]:
    """What a server's ``schedulerConfigValidation`` setting refuses when the configuration loads, as
    ``limitguard validate`` refuses the same flags: an unsupported release or a gate it refuses, and a
    ``kube-scheduler@VERSION`` outside the supported releases or naming another release than
    ``kubernetesVersion``. (A build of an out-of-tree scheduler limitguard has no table for is not
    refused: its newest build applies, with a warning on every verdict.)"""
    problems: list[tuple[str, str]] = []  # (field path, what is wrong)
    minor = None
    if kubernetes_version:
        try:
            minor = kube_scheduler_release(kubernetes_version, feature_gates).minor
        except ReleaseError as error:
            problems.append(("schedulerConfigValidation.kubernetesVersion", str(error)))
    if scheduler and scheduler.partition("@")[0] == KUBE_SCHEDULER and "@" in scheduler:
        try:
            chosen = resolve(scheduler)
        except SchedulerChoiceError as error:
            problems.append(("schedulerConfigValidation.scheduler", str(error)))
        else:
            pinned = chosen.pinned_minor if chosen is not None else None
            if minor is not None and pinned is not None and pinned != minor:
                problems.append(
                    (
                        "schedulerConfigValidation.scheduler",
                        f"{scheduler} is Kubernetes 1.{pinned}, but "
                        f"schedulerConfigValidation.kubernetesVersion names 1.{minor}: give one of them",
                    )
                )
    return problems


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
        f"its newest release {scheduler.build_name} applies (name another build with --scheduler "
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
    "detect",
    "named_plugins",
    "resolve",
    "resolve_leniently",
    "setting_problems",
]
