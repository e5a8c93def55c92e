"""Placement hints at pod CREATE: the edge between the mutator, the node table and core.hints.

The mutator calls `Hinter.add_to` with its own answer (the defaults patch, if any): the hint is
computed on the pod as that patch leaves it, so a defaulted pod is hinted by its new limits, and
its operations go after the defaults'. A hinted answer is built per pod, never remembered.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from typing import Any

from limitguard.core.config import Config
from limitguard.core.defaults import NotAPod
from limitguard.core.eligibility import Placement
from limitguard.core.hints import hint_annotation, hint_patch, preferred_term, skip_reason
from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.podlimits import PodSpecError, pod_limits
from limitguard.core.response import Response, patched
from limitguard.state.placement import HintNodes, hint_nodes
from limitguard.state.records import controller_of
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

# (outcome, reason): ("given", "In" | "NotIn" | "In-capped") or ("skipped", why)
HintCount = Callable[[tuple[str, str]], None]


def _ignore(key: tuple[str, str]) -> None:
    pass


class Hinter:
    def __init__(self, state: ClusterState, config: Config, count: HintCount = _ignore) -> None:
        self.state = state
        self.config = config
        self.count = count

    def add_to(self, answer: Response, pod: Any, namespace: str) -> Response:
        """*answer* with the hint's operations appended, or *answer* itself when there is none."""
        if not answer.allowed or not is_object(pod):
            return answer
        base_ops = answer.patch.operations() if answer.patch is not None else []
        try:
            ops, reason = self.hint_ops(with_adds(pod, base_ops) if base_ops else pod, namespace)
        except (NotAPod, PodSpecError) as error:
            log.debug("no placement hint for a malformed pod: %s", error)
            ops, reason = [], "malformed"
        self.count(("given" if ops else "skipped", reason))
        if not ops:
            return answer
        why = f"{answer.reason},placement-hint" if answer.patch is not None else "placement-hint"
        return patched(why, base_ops + ops, *answer.warnings)

    def hint_ops(self, pod: Mapping[str, Any], namespace: str) -> tuple[list[dict[str, Any]], str]:
        """The hint's patch operations for *pod* (empty: none) and the metrics reason."""
        spec = object_or_empty(pod.get("spec"))
        metadata = object_or_empty(pod.get("metadata"))
        config = self.config
        daemonset = controller_of(metadata) in config.limit_aware.daemonset_kinds
        skip = skip_reason(config, namespace, spec, object_or_empty(metadata.get("annotations")), daemonset)
        if skip is not None:
            return [], skip
        if not self.state.ready:
            return [], "state-incomplete"
        found = hint_nodes(
            self.state.node_table(),
            pod_limits(spec, object_or_empty(pod.get("status"))),
            Placement(spec),
            config.limit_aware.default_ratios,
            config.placement_hints.max_nodes,
        )
        if isinstance(found, str):
            return [], found
        return self._patch(pod, found)

    def _patch(self, pod: Mapping[str, Any], found: HintNodes) -> tuple[list[dict[str, Any]], str]:
        term = preferred_term(found.operator, found.values, self.config.placement_hints.weight)
        ops = hint_patch(pod, term, hint_annotation(term, found.fit, found.eligible, found.capped))
        if not ops:
            return [], "unchanged"  # a reinvocation whose term is the one already there
        return ops, f"{found.operator}-capped" if found.capped else str(found.operator)


def with_adds(pod: Mapping[str, Any], operations: list[dict[str, Any]]) -> dict[str, Any]:
    """*pod* with the "add" operations of a defaults patch applied: a copy of each object and list
    on the operations' paths only (the input is unchanged, and the rest is shared, not copied)."""
    result = dict(pod)
    for operation in operations:
        if operation.get("op") != "add":
            raise ValueError(f"unexpected patch operation {operation.get('op')!r}")
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in operation["path"].split("/")[1:]
        ]
        target: Any = result
        for part in parents:
            key: Any = int(part) if isinstance(target, list) else part
            child = target[key]
            child = list(child) if isinstance(child, list) else dict(child)
            target[key] = child
            target = child
        value = copy.deepcopy(operation["value"])
        if isinstance(target, list):
            target.insert(len(target) if last == "-" else int(last), value)
        else:
            target[last] = value
    return result
