"""Placement hints at pod CREATE: the edge between the mutator, the node labels and core.hints.

The mutator calls `Hinter.add_to` with its own answer (the defaults patch, if any): the hint is
computed on the pod as that patch leaves it, so a defaulted pod is hinted by its new limits, and
its operations go after the defaults'. The term depends only on the pod's limits and on which room
labels the nodes carry, never on any node's room, so it costs the same on any cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from limitguard.core.config import Config
from limitguard.core.defaults import NotAPod, with_adds
from limitguard.core.hints import (
    HINT_ANNOTATION,
    digest_of,
    hint_annotation,
    hint_patch,
    preferred_term,
    requirements,
    skip_reason,
)
from limitguard.core.memo import Cleared, Memo, MiB
from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.podlimits import PodSpecError, pod_limits, resources_key
from limitguard.core.podrules import PodRules
from limitguard.core.response import JsonPatch, Response, patched
from limitguard.state.records import controller_of
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

# Terms remembered by the requirements that make them (a workload's pods share one): bounded.
MAX_REMEMBERED_TERMS = 256
MAX_REMEMBERED_HINTS = 4096  # hinted patches, by the pod shape they depend on


def _hint_key(
    pod: Mapping[str, Any], spec: Mapping[str, Any], patch: JsonPatch | None, rules: PodRules
) -> tuple[object, ...] | None:
    """Everything the hint reads of a pod (the limits as the defaults' patch leaves them, where the
    term goes, an earlier term of ours), or None for a pod not worth remembering. Not the whole spec:
    the apiserver names every pod's token volume at random, so no two real pods would share it."""
    resources = resources_key(spec, pod.get("status"), rules)
    if resources is None:
        return None
    metadata = pod.get("metadata")
    annotations = metadata.get("annotations") if type(metadata) is dict else None
    affinity = spec.get("affinity")
    try:
        placed = orjson.dumps(affinity) if affinity is not None else None
    except TypeError:  # not JSON (only a test can build such a pod)
        return None
    return (
        patch.encoded if patch is not None else None,
        resources,
        placed,
        type(metadata).__name__,  # where the annotation goes, or a pod the patch refuses
        type(annotations).__name__,
        annotations.get(HINT_ANNOTATION) if type(annotations) is dict else None,
    )


# (outcome, reason): ("given", "Gt") or ("skipped", why)
HintCount = Callable[[tuple[str, str]], None]


def _ignore(key: tuple[str, str]) -> None:
    pass


class Hinter:
    """Adds the placement hint to the mutator's answers; counts hints given and skipped."""

    def __init__(self, state: ClusterState, config: Config, count: HintCount | None = None) -> None:
        self.state = state
        self.config = config
        self.count = count or _ignore
        # Policy: requirements -> (term, its digest, the annotation), MAX_REMEMBERED_TERMS, 1 MiB
        # (a term is a few hundred bytes), never cleared but when full.
        self._terms: Memo[tuple[tuple[str, int], ...], tuple[dict[str, Any], str, str]] = Memo(
            "hint-terms", entries=MAX_REMEMBERED_TERMS, max_bytes=1 * MiB
        )
        # Policy: per (defaults patch, resources shape, affinity, our annotation) the hint's patch and
        # reason, MAX_REMEMBERED_HINTS, 4 MiB, cleared when which room labels exist or the pod rules
        # change (a workload's pods share one; what a hint reads of the nodes is only that).
        self._hints: Memo[tuple[object, ...], tuple[JsonPatch | None, str]] = Memo(
            "hint-patches", entries=MAX_REMEMBERED_HINTS, max_bytes=4 * MiB, cleared=Cleared.ON_VERSION
        )

    def add_to(self, answer: Response, pod: Any, namespace: str) -> Response:
        """*answer* with the hint's operations appended, or *answer* itself when there is none."""
        if not answer.allowed or not is_object(pod):
            return answer
        try:
            hinted, reason = self.hinted_patch(pod, namespace, answer)
        except (NotAPod, PodSpecError) as error:
            log.debug("no placement hint for a malformed pod: %s", error)
            hinted, reason = None, "malformed"
        self.count(("given" if hinted is not None else "skipped", reason))
        if hinted is None:
            return answer
        why = f"{answer.reason},placement-hint" if answer.patch is not None else "placement-hint"
        return patched(why, hinted, *answer.warnings)

    def hinted_patch(
        self, pod: Mapping[str, Any], namespace: str, defaults: Response | None = None
    ) -> tuple[JsonPatch | None, str]:
        """The *defaults* answer's patch with the hint's operations after it (None: no hint) and the
        metrics reason. What skip_reason reads is never changed by the defaults' patch."""
        spec = object_or_empty(pod.get("spec"))
        metadata = object_or_empty(pod.get("metadata"))
        config = self.config
        daemonset = controller_of(metadata) in config.limit_aware.daemonset_kinds
        skip = skip_reason(config, namespace, spec, object_or_empty(metadata.get("annotations")), daemonset)
        if skip is not None:
            return None, skip
        state = self.state
        if not state.ready:
            return None, "state-incomplete"
        patch = defaults.patch if defaults is not None else None
        key = _hint_key(pod, spec, patch, state.pod_rules)
        if key is None:
            return self._worked_out(pod, patch)
        self._hints.at_version((state.table.label_keys_version, state.pod_rules))
        try:
            found = self._hints.get(key)
        except TypeError:  # an unhashable quantity: work it out, and let the parser reject it
            return self._worked_out(pod, patch)
        if found is None:
            found = self._worked_out(pod, patch)
            self._hints.put(key, found, value_bytes=len(found[0].encoded) * 2 if found[0] is not None else 0)
        return found

    def _worked_out(self, pod: Mapping[str, Any], patch: JsonPatch | None) -> tuple[JsonPatch | None, str]:
        if patch is not None:
            pod = with_adds(pod, patch.operations())
        spec = object_or_empty(pod.get("spec"))
        limits = pod_limits(spec, object_or_empty(pod.get("status")), self.state.pod_rules)
        found = requirements(limits, self.state.table.has_label)
        if isinstance(found, str):
            return None, found
        term, digest, annotation = self._term(tuple(found))
        ops = hint_patch(pod, term, annotation, digest)
        if not ops:
            return None, "unchanged"  # a reinvocation whose term is the one already there
        if patch is not None:
            ops = patch.operations() + ops
        return JsonPatch(orjson.dumps(ops)), "Gt"

    def _term(self, found: tuple[tuple[str, int], ...]) -> tuple[dict[str, Any], str, str]:
        kept = self._terms.get(found)
        if kept is None:
            weight = self.config.placement_hints.weight
            term = preferred_term(found, weight)
            digest = digest_of(orjson.dumps(term, option=orjson.OPT_SORT_KEYS))  # term_digest's bytes
            kept = (term, digest, hint_annotation([resource for resource, _ in found], weight, digest))
            self._terms.put(found, kept, value_bytes=len(digest) + 256)
        return kept
