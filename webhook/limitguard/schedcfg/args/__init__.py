"""Plugin args: one registry of kinds (``registry``) and one module per kind, as kube-scheduler's
validation_pluginargs.go; the out-of-tree projects' kinds and builds in ``koordinator`` and ``sigs``.
The dispatcher that runs them on a configuration is ``rules.plugin_args``."""

from .registry import ARGS_KINDS, PLUGIN_ARGS_KINDS

__all__ = ["ARGS_KINDS", "PLUGIN_ARGS_KINDS"]
