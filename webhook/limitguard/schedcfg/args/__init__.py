"""Plugin args: one registry of kinds (``registry``), one module per kind, and the dispatcher (``check``)."""

from .check import check_plugin_args, check_plugin_configs
from .registry import ARGS_KINDS, PLUGIN_ARGS_KINDS

__all__ = ["ARGS_KINDS", "PLUGIN_ARGS_KINDS", "check_plugin_args", "check_plugin_configs"]
