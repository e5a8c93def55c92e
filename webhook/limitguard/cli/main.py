"""The `limitguard` command. Each subcommand is one module of this package with add_arguments/run.

Only the chosen command's module is imported, so `limitguard validate` in a pre-commit hook does not
pay for aiohttp, the Kubernetes client or the server.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib import metadata

DISTRIBUTION = "kube-limitguard"  # the PyPI name; "limitguard" there is an unrelated project
DESCRIPTION = (
    "Keep every node's summed container limits within its allocatable x ratio (admission webhook and "
    "kube-scheduler extender), and check kube-scheduler configuration. "
    "Run `limitguard COMMAND --help` for a command's options."
)
SUBCOMMANDS = {
    "serve": ("limitguard.cli.serve", "run the admission webhook server (HTTPS)"),
    "certs": ("limitguard.cli.certs", "generate a CA and a serving certificate for the webhook Service"),
    "validate": ("limitguard.cli.validate", "validate KubeSchedulerConfiguration files or ConfigMaps"),
    "explain": ("limitguard.cli.explain", "show every node's verdict and scores for one pod"),
    "audit": ("limitguard.cli.audit", "list nodes over their limit-to-allocatable ratio (exit 1 if any)"),
    "reports": (
        "limitguard.cli.reports",
        "delete the policy reports limitguard wrote (the chart's uninstall hook)",
    ),
    "scheduler-trust": (
        "limitguard.cli.schedulertrust",
        "keep the second scheduler's CA bundle current and restart it when its files change (sidecar)",
    ),
    "cleanup-nodes": (
        "limitguard.cli.cleanup",
        "remove limitguard's limit-room labels and limit-full taint from every node (uninstall)",
    ),
}


class DefaultsShownFormatter(argparse.HelpFormatter):
    """Append `(default: X)` to options that have a meaningful default (not None, False or empty)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "(default" in text  # the help already says it
            or not action.option_strings
            or default is None
            or default is False  # a flag: its help says what it turns on
            or default == argparse.SUPPRESS
            or default == []
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def version() -> str:
    """The installed distribution's version (one source of truth: pyproject.toml)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of *command* only (every command is listed in --help)."""
    parser = argparse.ArgumentParser(prog="limitguard", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = commands.add_parser(
            name, help=help_text, description=help_text, formatter_class=DefaultsShownFormatter
        )
        if name == command:
            module = importlib.import_module(module_name)
            module.add_arguments(sub)
            sub.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = next((word for word in argv if not word.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # The reader went away (`limitguard validate ... | head`): stop quietly, as Unix tools do.
        # stdout is pointed at devnull so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
