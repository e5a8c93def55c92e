"""`limitguard explain POD.yaml`: every node's verdict and scores for one pod.

Thin: read the pod, build the cluster state (a file, or the live cluster), hand plain data to
limitguard.core.reports.explain. State loading and options come from
limitguard.cli.options, shared with `audit` and `serve`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import yaml

from limitguard.admission.mutating import Mutator
from limitguard.cli.options import (
    CommandError,
    add_state_arguments,
    load_counted_state,
    load_limitguard_config,
    print_warnings,
)
from limitguard.core.config import Config
from limitguard.core.defaults import with_adds
from limitguard.core.podlimits import PodSpecError, pod_amounts
from limitguard.core.reports.explain import explain_pod, render_text
from limitguard.core.scoring import PodFacts, ScoreSheet, with_all_scorers
from limitguard.extender.columnar import score_rows
from limitguard.extender.facts import NodeFactsReader
from limitguard.state.records import controller_of, is_mirror_pod
from limitguard.state.store import ClusterState


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pod", metavar="POD.yaml", help="the pod to explain (YAML or JSON; '-' for stdin)")
    add_state_arguments(parser)


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


def in_namespace(pod: Mapping[str, Any], namespace: str | None) -> Mapping[str, Any]:
    """The pod in *namespace* (`-n`, as `kubectl apply -n`) when its manifest names none."""
    if not namespace:
        return pod
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    named = metadata.get("namespace")
    if named and named != namespace:
        raise CommandError(
            f"the namespace from the provided object {named!r} does not match the namespace {namespace!r}"
        )
    return {**pod, "metadata": {**metadata, "namespace": namespace}}


def with_defaults(
    pod: Mapping[str, Any], state: ClusterState, config: Config
) -> tuple[Mapping[str, Any], str | None]:
    """The pod as the mutating webhook would leave it in its namespace, and a note when it changed."""
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    namespace = str(metadata.get("namespace") or "default")
    answer = Mutator(state, config, scheduler=False, hints=False).answer_for(pod, namespace)
    if answer.patch is None:
        return pod, None
    defaulted = with_adds(pod, answer.patch.operations())
    return (
        defaulted,
        f"best-effort pod: counted with the defaults the mutating webhook gives it in {namespace}",
    )


def run(args: argparse.Namespace) -> int:
    try:
        pod = in_namespace(read_pod(args.pod), getattr(args, "namespace", None))
        config = load_limitguard_config(args)
        state, release_note, warnings = load_counted_state(args, config)
        pod, defaults_note = with_defaults(pod, state, config)
        try:
            status = pod.get("status")
            status = status if isinstance(status, Mapping) else None
            amounts = pod_amounts(pod["spec"], status, state.pod_rules)
            facts = PodFacts.from_spec(pod["spec"], status, state.pod_rules)
        except PodSpecError as error:
            raise CommandError(f"{args.pod}: {error}") from None
    except CommandError as error:
        print(f"limitguard explain: {error}", file=sys.stderr)
        return 2
    reader = NodeFactsReader(state)
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    scorers = with_all_scorers(config.scorers)

    def score_on_table(nodes: list[Any]) -> ScoreSheet:
        """The candidates' scores from the node table's columns (exact always: state.exact)."""
        table = state.node_table()
        names = [node.traits.name for node in nodes]
        scored = score_rows(
            table, table.node_rows(names), names, facts, scorers, config.limit_aware.default_ratios
        )
        return scored.to_sheet()

    explanation = explain_pod(
        pod,
        amounts.limits,
        facts,
        list(state.nodes()),
        state.allocated,
        reader.facts,
        config.limit_aware.per_namespace().get(str(metadata.get("namespace") or "default"))
        or config.limit_aware,
        scorers,
        exempt=config.limit_aware.exempts(controller_of(metadata)) or is_mirror_pod(metadata),
        score=score_on_table,
        sources=amounts.sources,
    )
    if defaults_note:
        explanation.notes.insert(0, defaults_note)
    explanation.notes.append(release_note)
    explanation.warnings = warnings
    print_warnings("explain", warnings)
    if args.output == "json":
        sys.stdout.write(orjson.dumps(explanation.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_text(explanation))
    return 0
