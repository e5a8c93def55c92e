"""The one registry of args kinds: kind -> plugin, schema, defaulting and rules.

kube-scheduler decodes the args of an in-tree plugin as ``<PluginName>Args`` (validation_pluginargs.go has
one function per kind). Each reading scheduler decodes those plus its own build's kinds
(``tables.readers``): two projects may register a kind of the same name (CoschedulingArgs), so each
scheduler has its own registry (``registry_for``).
Adding a kind means one module and one schema under ``limitguard/schemas/args/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import cast

from ..tables.readers import Scheduler
from . import (
    balanced,
    dynamicresources,
    fit,
    fitplus,
    interpodaffinity,
    limitaware,
    nodeaffinity,
    preemption,
    scarce,
    topologyspread,
    volumebinding,
)
from .kind import ArgsKind

#: kube-scheduler's own kinds (validation_pluginargs.go), every reading scheduler has them.
IN_TREE_KINDS: tuple[ArgsKind, ...] = (
    fit.ARGS,
    balanced.ARGS,
    preemption.ARGS,
    interpodaffinity.ARGS,
    topologyspread.ARGS,
    volumebinding.ARGS,
    nodeaffinity.ARGS,
    dynamicresources.ARGS,
)


@dataclass(frozen=True)
class Registry:
    """The args kinds one scheduler decodes: kind -> entry, and plugin -> its kinds (the first one is
    assumed when ``kind`` is omitted)."""

    kinds: Mapping[str, ArgsKind]
    plugin_kinds: Mapping[str, tuple[str, ...]]


def build_registry(entries: tuple[ArgsKind, ...]) -> Registry:
    kinds = {entry.kind: entry for entry in entries}
    plugin_kinds: dict[str, tuple[str, ...]] = {}
    for entry in kinds.values():
        plugin_kinds[entry.plugin] = (*plugin_kinds.get(entry.plugin, ()), entry.kind)
    return Registry(kinds, plugin_kinds)


#: limitguard's own scorers' kinds as its extender reads them: kube-scheduler's view of their args.
LIMITGUARD_KINDS: tuple[ArgsKind, ...] = (fitplus.ARGS, fitplus.LEGACY_ARGS, scarce.ARGS, limitaware.ARGS)
_LIMITGUARD = build_registry(IN_TREE_KINDS + LIMITGUARD_KINDS)
ARGS_KINDS: dict[str, ArgsKind] = dict(_LIMITGUARD.kinds)
PLUGIN_ARGS_KINDS: dict[str, tuple[str, ...]] = dict(_LIMITGUARD.plugin_kinds)


@cache
def _registry(kinds: tuple[ArgsKind, ...]) -> Registry:
    return build_registry(IN_TREE_KINDS + kinds)


def registry_for(scheduler: Scheduler) -> Registry:
    """The args kinds ``scheduler`` decodes: kube-scheduler's and its build's (limitguard's own scorers'
    for kube-scheduler, as its extender reads them)."""
    if scheduler.build is None:
        return _LIMITGUARD
    return _registry(cast(tuple[ArgsKind, ...], scheduler.build.kinds))
