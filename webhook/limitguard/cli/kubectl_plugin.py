"""`kubectl limitguard explain|audit|validate`: the `kubectl-limitguard` entry point.

kubectl runs a plugin with every argument after its name, its own global flags included, and the
environment it was given (KUBECONFIG among it). So the plugin takes `--kubeconfig`, `--context` and
`-n/--namespace` wherever they appear, in kubectl's forms (`--context x`, `--context=x`, `-n x`,
`-nx`), and hands them to the command that uses them: explain and audit read the live cluster
through them; validate reads files only and ignores them. Without `--kubeconfig`, $KUBECONFIG and
then ~/.kube/config are read before a service account, as kubectl does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from limitguard.cli import main as limitguard

COMMANDS = ("explain", "audit", "validate")
LIVE_COMMANDS = frozenset({"explain", "audit"})
FLAGS = {"--kubeconfig": "kubeconfig", "--context": "context", "--namespace": "namespace", "-n": "namespace"}
USAGE = "usage: kubectl limitguard {explain|audit|validate} [options]  (kubectl limitguard COMMAND --help)"


def split_kubectl_flags(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """kubectl's global flags this plugin honours, and the other arguments in order."""
    found: dict[str, str] = {}
    rest: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            rest += [word, *words]
            break
        name, equals, value = word.partition("=")
        if name in FLAGS and word.startswith("--") and equals:
            found[FLAGS[name]] = value
        elif word in FLAGS:
            value = next(words, None)
            if value is None:
                raise SystemExit(f"kubectl limitguard: flag needs an argument: {word}")
            found[FLAGS[word]] = value
        elif word.startswith("-n") and not word.startswith("--") and len(word) > 2:
            found["namespace"] = word[2:]
        else:
            rest.append(word)
    return found, rest


def limitguard_argv(argv: list[str], environ: Mapping[str, str]) -> list[str]:
    flags, rest = split_kubectl_flags(argv)
    command = next((word for word in rest if not word.startswith("-")), None)
    if command not in COMMANDS:
        raise SystemExit(f"kubectl limitguard: unknown command {command!r}\n{USAGE}" if command else USAGE)
    if command not in LIVE_COMMANDS:
        return rest
    given = {**flags, "kubeconfig": flags.get("kubeconfig") or environ.get("KUBECONFIG", "")}
    extra = [f"--{name}={given[name]}" for name in ("kubeconfig", "context", "namespace") if given.get(name)]
    end = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:end], *extra, *rest[end:]]


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    arguments = limitguard_argv(
        sys.argv[1:] if argv is None else argv, os.environ if environ is None else environ
    )
    return limitguard.main(arguments)


if __name__ == "__main__":
    sys.exit(main())
