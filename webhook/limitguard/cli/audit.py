"""`limitguard audit`: nodes over their limit-to-allocatable ratio; exit 1 when there are any.

Usable in CI and cron: 0 = every node within its ratio, 1 = some node over, 2 = could not check.
`-o openreports` (or `wgpolicyk8s`) prints the policy reports the leader writes for the same state
instead (limitguard.cli.policyreports), with the same exit codes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping

import orjson

from limitguard.cli import policyreports
from limitguard.cli.options import (
    CommandError,
    add_state_arguments,
    load_counted_state_and_version,
    load_limitguard_config,
    print_warnings,
)
from limitguard.core.config import DAEMONSET_KINDS
from limitguard.core.reports.audit import DEFAULT_TOP_PODS, PodShare, audit, render_text
from limitguard.state.scan import screened_nodes
from limitguard.state.store import ClusterState


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_state_arguments(parser, outputs=("text", "json", *policyreports.OUTPUTS))
    parser.add_argument(
        "--top", type=int, default=DEFAULT_TOP_PODS, help="pods to list per over node (largest limits first)"
    )


def pods_on(
    state: ClusterState, daemonset_kinds: frozenset[tuple[str, str]] = DAEMONSET_KINDS
) -> Callable[[set[str]], Mapping[str, list[PodShare]]]:
    """The counted pods of some nodes, in one walk over the pods."""

    def lookup(nodes: set[str]) -> Mapping[str, list[PodShare]]:
        found: dict[str, list[PodShare]] = {}
        for pod in state.pods():
            node = pod.counted_node
            if node in nodes and pod.limits:
                found.setdefault(node, []).append(
                    PodShare(pod.key, pod.limits, pod.controller in daemonset_kinds)
                )
        return found

    return lookup


def run(args: argparse.Namespace) -> int:
    try:
        config = load_limitguard_config(args)
        state, release_note, warnings, cluster_version = load_counted_state_and_version(args, config)
        reports = (
            policyreports.policy_reports(args, config, state, cluster_version)
            if args.output in policyreports.OUTPUTS
            else None
        )
    except CommandError as error:
        print(f"limitguard audit: {error}", file=sys.stderr)
        return 2
    nodes, checked_before, unchecked_before = screened_nodes(state, config.limit_aware)
    report = audit(
        nodes,
        state.committed,
        pods_on(state, config.limit_aware.daemonset_kinds),
        config.limit_aware,
        top=max(args.top, 0),  # type: ignore[arg-type]
        checked_before=checked_before,
        unchecked_before=unchecked_before,
    )
    report.pod_rules, report.warnings = release_note, warnings
    print_warnings("audit", warnings)
    if reports is not None:
        sys.stdout.write(policyreports.render(reports))
    elif args.output == "json":
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 1 if report.over else 0
