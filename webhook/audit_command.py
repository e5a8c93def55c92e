"""`limitguard audit`: nodes over their limit-to-allocatable ratio; exit 1 when there are any.

Usable in CI and cron: 0 = every node within its ratio, 1 = some node over, 2 = could not check.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping

import orjson

from webhook.cluster.scan import over_ratio_names
from webhook.cluster.state import ClusterState
from webhook.core.audit import DEFAULT_TOP_PODS, PodShare, audit, render_text
from webhook.explain_command import CommandError, add_state_arguments, load_limitguard_config, load_state


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_state_arguments(parser)
    parser.add_argument(
        "--top", type=int, default=DEFAULT_TOP_PODS, help="pods to list per over node (largest limits first)"
    )


def pods_on(state: ClusterState) -> Callable[[set[str]], Mapping[str, list[PodShare]]]:
    """The counted pods of some nodes, in one walk over the pods."""

    def lookup(nodes: set[str]) -> Mapping[str, list[PodShare]]:
        found: dict[str, list[PodShare]] = {}
        for pod in state.pods():
            node = pod.counted_node
            if node in nodes and pod.limits:
                found.setdefault(node, []).append(PodShare(pod.key, pod.limits, pod.daemonset))
        return found

    return lookup


def run(args: argparse.Namespace) -> int:
    try:
        config = load_limitguard_config(args)
        state = load_state(args, config)
    except CommandError as error:
        print(f"limitguard audit: {error}", file=sys.stderr)
        return 2
    over = over_ratio_names(state.node_table(), config.limit_aware.default_ratios)
    nodes = list(state.nodes()) if over is None else [state.node(name) for name in over]
    report = audit(
        nodes,
        state.committed,
        pods_on(state),
        config.limit_aware,
        top=max(args.top, 0),  # type: ignore[arg-type]
        checked_before=0 if over is None else state.counts()["nodes"] - len(nodes),
    )
    if args.output == "json":
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 1 if report.over else 0
