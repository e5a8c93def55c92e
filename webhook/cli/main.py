"""The `limitguard` command: each subcommand lives in its own module with add_arguments/run."""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = {
    "serve": ("limitguard.cli.serve", "run the admission webhook server (HTTPS)"),
    "certs": ("limitguard.cli.certs", "generate a CA and a serving certificate for the webhook Service"),
    "validate": ("limitguard.cli.validate", "validate KubeSchedulerConfiguration files or ConfigMaps"),
    "explain": ("limitguard.cli.explain", "show every node's verdict and scores for one pod"),
    "audit": ("limitguard.cli.audit", "list nodes over their limit-to-allocatable ratio (exit 1 if any)"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="limitguard", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
