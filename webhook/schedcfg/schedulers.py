"""The scheduler that reads the file: kube-scheduler, koord-scheduler or the scheduler-plugins scheduler.

Each out-of-tree scheduler is kube-scheduler's code at one Kubernetes minor plus its own plugins and
args kinds, so a configuration is judged by the in-tree rules of *that* minor (koord-scheduler v1.8 is
built on Kubernetes 1.35 whatever the cluster runs), its own registry of args kinds and its own
plugins' extension points. One table, one entry per scheduler; detection reads the plugins a
configuration names and decides only on plugins exactly one project registers.

The projects' own tables are ``args.koordinator`` (koordinator-sh/koordinator v1.8.0) and ``args.sigs``
(kubernetes-sigs/scheduler-plugins v0.34); LimitAware comes from Koordinator PR #1486 (closed, unmerged).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from limitguard.core.text import clip

from .args import fitplus, koordinator, limitaware, scarce
from .args import sigs as scheduler_plugins
from .args.common import as_dict, as_list
from .args.kind import ArgsKind
from .args.registry import IN_TREE_KINDS, LIMITGUARD_KINDS, Registry, build_registry
from .rules.plugin_tables import added_in, in_tree_plugins, removal_hint
from .rules.releases import Release

KUBE_SCHEDULER = "kube-scheduler"
KOORD_SCHEDULER = "koord-scheduler"
SCHEDULER_PLUGINS = "scheduler-plugins"
AUTO = "auto"

#: koord-scheduler's own plugins (``args.koordinator``) and LimitAware from Koordinator PR #1486, the
#: design limitguard implements: judged as a build carrying that change, with a note.
_KOORDINATOR_PLUGINS: dict[str, frozenset[str]] = {
    **koordinator.PLUGINS,
    # pkg/scheduler/plugins/limitaware at 9ddd4fb2 (PR #1486)
    "LimitAware": frozenset({"preFilter", "filter", "preScore", "score", "reserve"}),
}

_KOORDINATOR_KINDS: tuple[ArgsKind, ...] = (
    *koordinator.KINDS,
    fitplus.KOORD_ARGS,
    fitplus.KOORD_LEGACY_ARGS,
    scarce.KOORD_ARGS,
    limitaware.KOORD_ARGS,
)


@dataclass(frozen=True)
class Scheduler:
    """One scheduler as it reads a KubeSchedulerConfiguration at start-up."""

    name: str
    #: The release whose rules apply (None: kube-scheduler, whose release is the cluster's).
    release: str | None
    #: Kubernetes minor of its in-tree part (None: the chosen --kubernetes-version).
    kubernetes_minor: int | None
    #: Its own args kinds (the in-tree ones of its minor come on top).
    kinds: tuple[ArgsKind, ...]
    #: Its own plugins -> the extension points they implement.
    plugins: Mapping[str, frozenset[str]]
    #: Plugins of this project only: naming one shows the file is written for it.
    markers: frozenset[str]
    #: Score plugins whose dominating weight is the project's design (a reserved node must win).
    dominant_by_design: frozenset[str] = frozenset()
    #: Plugins this table knows but its released builds do not register, with why they are judged anyway.
    unreleased: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.name if self.release is None else f"{self.name} {self.release}"

    def release_for(self, cluster: Release) -> Release:
        """The Release its in-tree rules are those of: its own minor, else the cluster's."""
        if self.kubernetes_minor is None or self.kubernetes_minor == cluster.minor:
            return replace(cluster, scheduler=self.name)
        return Release(self.kubernetes_minor, dict(cluster.overrides), cluster.note, scheduler=self.name)


_KOORDINATOR_ONLY = frozenset(_KOORDINATOR_PLUGINS) - {"Coscheduling"}
_SIGS_ONLY = frozenset(scheduler_plugins.PLUGINS) - frozenset(_KOORDINATOR_PLUGINS)

SCHEDULERS: dict[str, Scheduler] = {
    s.name: s
    for s in (
        Scheduler(KUBE_SCHEDULER, None, None, LIMITGUARD_KINDS, {}, frozenset()),
        Scheduler(
            KOORD_SCHEDULER,
            koordinator.RELEASE,
            koordinator.KUBERNETES_MINOR,
            _KOORDINATOR_KINDS,
            _KOORDINATOR_PLUGINS,
            _KOORDINATOR_ONLY,
            dominant_by_design=frozenset({"Reservation"}),
            unreleased={
                "LimitAware": "released koord-scheduler builds do not register LimitAware (it exists in "
                "Koordinator PR #1486 only): judged as a build carrying that change"
            },
        ),
        Scheduler(
            SCHEDULER_PLUGINS,
            scheduler_plugins.RELEASE,
            scheduler_plugins.KUBERNETES_MINOR,
            scheduler_plugins.KINDS,
            scheduler_plugins.PLUGINS,
            _SIGS_ONLY,
        ),
    )
}
CHOICES: tuple[str, ...] = (*SCHEDULERS, AUTO)


def scheduler_of(release: Release) -> Scheduler:
    """The scheduler a Release is validated for (its ``scheduler`` name)."""
    return SCHEDULERS.get(release.scheduler, SCHEDULERS[KUBE_SCHEDULER])


def registered_plugins(release: Release) -> dict[str, frozenset[str] | None]:
    """Every plugin the reading scheduler registers: the in-tree ones of its minor, then its own."""
    return {**in_tree_plugins(release), **scheduler_of(release).plugins}


def reader_label(release: Release) -> str:
    """How messages name the reading scheduler: ``kube-scheduler 1.37``, ``koord-scheduler v1.8.0
    (Kubernetes 1.35)``."""
    scheduler = scheduler_of(release)
    if scheduler.release is None:
        return f"{scheduler.name} {release.name}"
    return f"{scheduler.label} (Kubernetes {release.name})"


@cache
def _registry(name: str) -> Registry:
    return build_registry(IN_TREE_KINDS + SCHEDULERS[name].kinds)


def registry_for(release: Release) -> Registry:
    """The args kinds the reading scheduler decodes: kube-scheduler's and its own."""
    return _registry(scheduler_of(release).name)


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
        return Detection(scheduler, f"names {_listed(marks)}, registered only by {scheduler.name}")
    if len(found) > 1:
        name = max(found, key=lambda n: len(found[n]))
        described = "; ".join(f"{n}: {_listed(m)}" for n, m in found.items())
        return Detection(
            SCHEDULERS[name],
            f"names plugins of more than one scheduler ({described}): judged for {name}; {FLAG_HINT}",
            certain=False,
        )
    kube = SCHEDULERS[KUBE_SCHEDULER]
    shared = [n for n in names if n not in in_tree and sum(n in s.plugins for s in SCHEDULERS.values()) > 1]
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
    """The scheduler for ``config``: the one ``choice`` names (``named_by`` says where), or detected when
    ``choice`` is auto."""
    if choice == AUTO:
        return detect(config, cluster)
    return Detection(SCHEDULERS[choice], f"named by {named_by}")


__all__ = [
    "AUTO",
    "CHOICES",
    "FLAG_HINT",
    "KOORD_SCHEDULER",
    "KUBE_SCHEDULER",
    "SCHEDULERS",
    "SCHEDULER_PLUGINS",
    "Detection",
    "Scheduler",
    "choose",
    "detect",
    "named_plugins",
    "reader_label",
    "registered_plugins",
    "registry_for",
    "scheduler_of",
]
