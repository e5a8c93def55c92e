"""``limitguard validate``: check scheduler configuration files before they reach a cluster.

Exit codes: 0 all files valid (warnings allowed unless --strict), 1 at least one file invalid, 2 usage or
I/O error (unreadable file, unsupported --kubernetes-version, a --scheduler build limitguard has no table
for). The verdict is that of the scheduler that reads the file (--scheduler NAME[@VERSION], detected by
default): kube-scheduler of the chosen release (--kubernetes-version, --feature-gates), or one build of
koord-scheduler / the scheduler-plugins scheduler at the Kubernetes release it is built on. Suitable as a pre-commit hook and a CI step; see docs/validator.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, BinaryIO

from limitguard.cli.configfile import config_errors
from limitguard.core.kuberelease import BuiltOn, from_flag, resolve_release
from limitguard.core.kubeversion import DEFAULT_MINOR, supported_minor, supported_text
from limitguard.schedcfg.documents import MAX_INPUT_BYTES
from limitguard.schedcfg.report import Finding, Report
from limitguard.schedcfg.schedulers import AUTO, CHOICES, SchedulerChoiceError, resolve
from limitguard.schedcfg.tables.readers import Scheduler
from limitguard.schedcfg.tables.releases import (
    KNOWN_GATES,
    Release,
    ReleaseError,
    parse_feature_gates,
    reader_gates,
)
from limitguard.schedcfg.validator import validate_text

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the ``validate`` options on ``parser`` (used by the top-level ``limitguard`` CLI)."""
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="KubeSchedulerConfiguration, ConfigMap or multi-document YAML file; - reads stdin",
    )
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print informational notes (e.g. args of plugins limitguard does not know)",
    )
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors (exit 1)")
    parser.add_argument(
        "--kubernetes-version",
        metavar="X.Y",
        help=f"kube-scheduler release to validate for (default 1.{DEFAULT_MINOR}, or the one "
        f"--scheduler kube-scheduler@VERSION names; supported: {supported_text()})",
    )
    parser.add_argument(
        "--scheduler",
        type=_scheduler_choice,
        default=AUTO,
        metavar="NAME[@VERSION]",
        help=f"the scheduler that reads the file ({', '.join(CHOICES)}), optionally one build of it "
        "(koord-scheduler@v1.7.0, scheduler-plugins@main; without @VERSION its newest build): its "
        "in-tree part's Kubernetes release, plugins and args kinds apply (default auto: detected from the "
        "plugins only one project has, at its newest build); kube-scheduler@VERSION names the "
        "Kubernetes release (kube-scheduler@v1.33.0: 1.33), as --kubernetes-version does",
    )
    parser.add_argument(
        "--feature-gates",
        metavar="A=true,B=false",
        default="",
        help="kube-scheduler feature gates that change validation (" + ", ".join(sorted(KNOWN_GATES)) + ")",
    )


def _scheduler_choice(text: str) -> str:
    """``NAME[@VERSION]`` as given, once limitguard knows it; otherwise a usage error (exit 2)."""
    try:
        resolve(text)
    except SchedulerChoiceError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _read(name: str) -> str:
    """Read at most MAX_INPUT_BYTES + 1 bytes so a huge file is refused without loading it whole."""
    stream: BinaryIO
    if name == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        with open(name, "rb") as stream:
            data = stream.read(MAX_INPUT_BYTES + 1)
    return data.decode("utf-8")


def _load(name: str, release: Release, scheduler: str = AUTO) -> Report:
    source = "<stdin>" if name == "-" else name
    try:
        text = _read(name)
    except UnicodeDecodeError as exc:
        return Report(
            source, [Finding("error", "", f"file is not valid UTF-8 (byte {exc.start})", "input.encoding")]
        )
    return validate_text(
        text, source=source, release=release, scheduler=scheduler, other_kinds=OWN_CONFIGURATION
    )


def _limitguard_configuration(document: dict[str, Any]) -> list[Finding]:
    """limitguard's own configuration file, judged as `limitguard serve --config` loads it: every
    problem of every section."""
    return [
        Finding("error", error.path, error.detail, "limitguard-config") for error in config_errors(document)
    ]


OWN_CONFIGURATION = {"LimitGuardConfiguration": _limitguard_configuration}


def _release(flag_value: str | None, chosen: Scheduler | None, gates: dict[str, bool]) -> tuple[Release, str]:
    """kube-scheduler's release for the files and why (limitguard.core.kuberelease): the one
    ``--scheduler kube-scheduler@VERSION`` names, else --kubernetes-version, else the newest supported.
    ReleaseError when the flag names an unsupported release, or another one than --scheduler does."""
    flag = from_flag("--kubernetes-version", flag_value)
    minor = supported_minor(flag.text) if flag else None
    pinned = chosen is not None and chosen.build is None and chosen.pinned_minor is not None
    if pinned and minor is not None and minor != chosen.pinned_minor:
        raise ReleaseError(
            f"--scheduler {chosen.spec} is Kubernetes 1.{chosen.pinned_minor}, but --kubernetes-version "
            f"names 1.{minor}: give one of them"
        )
    built_on = BuiltOn(chosen.label, chosen.pinned_minor) if pinned else None
    kubernetes, why = resolve_release(flag, build=built_on)
    return Release(kubernetes.minor, gates), why


def run(args: argparse.Namespace) -> int:
    """Validate ``args.files``, print the results, return the exit code."""
    scheduler = getattr(args, "scheduler", AUTO)
    chosen = resolve(scheduler)
    try:
        gates = parse_feature_gates(getattr(args, "feature_gates", None))
        release, why = _release(getattr(args, "kubernetes_version", None), chosen, gates)
    except ReleaseError as exc:
        print(f"limitguard validate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # --feature-gates are the reading scheduler's flags, judged at its own Kubernetes minor (koord-scheduler
    # v1.8: 1.35); with auto that is per file, by the validator, where the reader is known
    if chosen is not None:
        reader = chosen.reader_for(release)
        _, problems = reader_gates(reader.release)
        if problems:
            print(f"limitguard validate: {reader.label}: {'; '.join(problems)}", file=sys.stderr)
            return EXIT_USAGE
    unknown_gates = sorted(set(release.overrides) - KNOWN_GATES)
    if unknown_gates:
        print(
            f"limitguard validate: feature gates {', '.join(unknown_gates)} do not change validation; ignored",
            file=sys.stderr,
        )
    reports: list[Report] = []
    io_errors: list[dict[str, str]] = []
    for name in args.files:
        try:
            reports.append(_load(name, release, scheduler))
        except OSError as exc:
            io_errors.append({"file": name, "error": exc.strerror or str(exc)})
    strict = bool(getattr(args, "strict", False))

    def failed(report: Report) -> bool:
        return not report.passes(strict=strict)

    if getattr(args, "output", "text") == "json":
        document: dict[str, Any] = {
            "valid": not io_errors and not any(failed(r) for r in reports),
            "kubernetesVersion": release.name,
            "kubernetesVersionFrom": why,
            "scheduler": getattr(args, "scheduler", AUTO),
            "files": [r.to_dict(strict=strict) for r in reports],
            "ioErrors": io_errors,
            "summary": {
                "files": len(reports) + len(io_errors),
                "invalid": sum(failed(r) for r in reports),
                "errors": sum(len(r.errors) for r in reports),
                "warnings": sum(len(r.warnings) for r in reports),
            },
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        for report in reports:
            print(report.format(show_info=bool(getattr(args, "verbose", False)), strict=strict))
    for problem in io_errors:
        print(f"{problem['file']}: error: cannot read: {problem['error']}", file=sys.stderr)

    if io_errors:
        return EXIT_USAGE
    return EXIT_INVALID if any(failed(r) for r in reports) else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="limitguard validate",
        description="Validate kube-scheduler configuration files (KubeSchedulerConfiguration, plugin args).",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
