"""The one registry of args kinds: kind -> plugin, schema, defaulting and rules.

kube-scheduler decodes the args of an in-tree plugin as ``<PluginName>Args`` (validation_pluginargs.go has
one function per kind); limitguard also knows the out-of-tree kinds the project scores with. Adding a kind
means one module here and one schema under ``schemas/args/``.
"""

from __future__ import annotations

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

ARGS_KINDS: dict[str, ArgsKind] = {
    entry.kind: entry
    for entry in (
        fit.ARGS,
        balanced.ARGS,
        preemption.ARGS,
        interpodaffinity.ARGS,
        topologyspread.ARGS,
        volumebinding.ARGS,
        nodeaffinity.ARGS,
        dynamicresources.ARGS,
        fitplus.ARGS,
        fitplus.LEGACY_ARGS,
        scarce.ARGS,
        limitaware.ARGS,
    )
}

#: Plugin -> its args kinds, the first one being the kind assumed when ``kind`` is omitted.
PLUGIN_ARGS_KINDS: dict[str, tuple[str, ...]] = {}
for _entry in ARGS_KINDS.values():
    PLUGIN_ARGS_KINDS[_entry.plugin] = (*PLUGIN_ARGS_KINDS.get(_entry.plugin, ()), _entry.kind)
