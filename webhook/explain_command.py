"""`limitguard explain POD.yaml`: every node's verdict and scores for one pod.

Thin: read the pod, build the cluster state (a file, or the live cluster), hand plain data to
webhook.core.explain. The state loading here is shared with `limitguard audit`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import yaml

from webhook.cluster.filesource import ClusterFileError, load_cluster_file
from webhook.cluster.records import is_daemonset_pod
from webhook.cluster.state import ClusterState
from webhook.configfile import load_config
from webhook.core.config import Config, ConfigError
from webhook.core.explain import explain_pod, render_text
from webhook.core.podlimits import PodSpecError, pod_limits
from webhook.core.scoring import PodFacts, ScoreSheet, with_all_scorers
from webhook.extender.columnar import score_rows
from webhook.extender.facts import NodeFactsReader

DEFAULT_LIVE_TIMEOUT_SECONDS = 60.0


class CommandError(Exception):
    """A problem the user must fix; printed without a traceback, exit code 2."""


def add_state_arguments(parser: argparse.ArgumentParser) -> None:
    """--cluster FILE, or (without it) the live cluster like `limitguard serve`; plus --config."""
    parser.add_argument(
        "--cluster",
        metavar="FILE",
        help="cluster state file (`kubectl get nodes,pods,namespaces -A -o yaml`); without it, the live cluster",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig for the live cluster (when --cluster is not given)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_LIVE_TIMEOUT_SECONDS,
        help="seconds to wait for the live cluster to be fully listed",
    )
    parser.add_argument(
        "--config", help="LimitGuardConfiguration YAML file (ratios, enforcement, the extender's scorers)"
    )
    parser.add_argument("--output", "-o", choices=["text", "json"], default="text")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pod", metavar="POD.yaml", help="the pod to explain (YAML or JSON; '-' for stdin)")
    add_state_arguments(parser)


async def _live_state(kubeconfig: str | None, timeout: float) -> ClusterState:
    from webhook.cluster.live import start_live_feed

    state = ClusterState()
    feed = await start_live_feed(state, kubeconfig)
    try:
        deadline = time.monotonic() + timeout
        while not state.ready:
            if time.monotonic() > deadline:
                raise CommandError(f"the live cluster was not fully listed within {timeout:g}s")
            await asyncio.sleep(0.05)
    finally:
        await feed.stop()
    return state


def load_state(args: argparse.Namespace, config: Config) -> ClusterState:
    """The cluster state from --cluster FILE, or a one-off full list of the live cluster."""
    state = ClusterState(config.limit_aware.binding_ledger_ttl_seconds)
    if args.cluster:
        try:
            load_cluster_file(state, args.cluster)
        except ClusterFileError as error:
            raise CommandError(str(error)) from None
        return state
    try:
        return asyncio.run(_live_state(args.kubeconfig, args.timeout))
    except OSError as error:  # KubeConfigError and connection failures
        raise CommandError(f"cannot read the live cluster: {error}") from None


def load_limitguard_config(args: argparse.Namespace) -> Config:
    try:
        return load_config(args.config)
    except ConfigError as error:
        raise CommandError(str(error)) from None


def _read_document(name: str) -> Any:
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as error:
        raise CommandError(f"{name}: cannot read: {error.strerror}") from None
    try:
        if data.lstrip()[:1] == b"{":
            return orjson.loads(data)
        return yaml.safe_load(data)
    except (orjson.JSONDecodeError, yaml.YAMLError) as error:
        raise CommandError(f"{name}: not valid YAML or JSON: {error}") from None


def read_pod(name: str) -> Mapping[str, Any]:
    pod = _read_document(name)
    if (
        not isinstance(pod, Mapping)
        or pod.get("kind") not in (None, "Pod")
        or not isinstance(pod.get("spec"), Mapping)
    ):
        raise CommandError(f"{name}: expected a Pod with a spec")
    return pod


def run(args: argparse.Namespace) -> int:
    try:
        pod = read_pod(args.pod)
        config = load_limitguard_config(args)
        try:
            limits = pod_limits(pod["spec"])
            facts = PodFacts.from_spec(pod["spec"])
        except PodSpecError as error:
            raise CommandError(f"{args.pod}: {error}") from None
        state = load_state(args, config)
    except CommandError as error:
        print(f"limitguard explain: {error}", file=sys.stderr)
        return 2
    reader = NodeFactsReader(state)
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    scorers = with_all_scorers(config.scorers)

    def score_on_table(nodes: list[Any]) -> ScoreSheet | None:
        """The candidates' scores from the node table's columns (None: the per-node reference)."""
        table = state.node_table()
        names = [node.traits.name for node in nodes]
        scored = score_rows(
            table, table.node_rows(names), names, facts, scorers, config.limit_aware.default_ratios
        )
        return scored.to_sheet() if scored is not None else None

    explanation = explain_pod(
        pod,
        limits,
        facts,
        list(state.nodes()),
        state.allocated,
        reader.facts,
        config.limit_aware,
        scorers,
        exempt=config.limit_aware.exempt_daemonset_pods and is_daemonset_pod(metadata),
        score=score_on_table,
    )
    if args.output == "json":
        sys.stdout.write(orjson.dumps(explanation.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_text(explanation))
    return 0
