"""Placement hints: one preferred node-affinity term that favours the nodes with room for a pod.

kube-scheduler ranks nodes by requests, so the nodes full by limits (light by requests) are the
ones it prefers, and a denied binding sends the pod back to the same node. A *preferred* term
naming the eligible nodes where the pod's limits fit steers it elsewhere without ever stranding
it: a hint is frozen at creation, and a stale required term would keep the pod off a node that
has room since. Everything here is a plain function; the fit mask comes from the node table.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from limitguard.core.config import DEFAULT_SCHEDULER, Config, Enforcement, HintMode
from limitguard.core.defaults import MIRROR_ANNOTATION, NotAPod, pointer
from limitguard.core.objects import is_object

HINT_ANNOTATION = "limitguard.io/placement-hint"
# Nodes are named by this label's value, which is not always the node name (matchFields would
# allow one name per requirement; kubelet's --hostname-override sets the label).
HOSTNAME_LABEL = "kubernetes.io/hostname"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class Operator(enum.StrEnum):
    IN = "In"
    NOT_IN = "NotIn"


def skip_reason(
    config: Config, namespace: str, spec: Mapping[str, Any], annotations: Mapping[str, Any], daemonset: bool
) -> str | None:
    """Why the pod gets no hint whatever the nodes say (a metrics reason), or None.

    Auto hints only where limitguard may deny the pod's bindings (effective enforcement Deny);
    a pod bound at creation, a mirror pod (the kubelet runs it) or a DaemonSet pod (one node
    each) has nothing to choose, and a scheduler not in `scheduler_names` may not read node
    affinity the same way (limitguard's own places exactly without it).
    """
    mode = config.placement_hints.mode
    if mode is HintMode.NEVER:
        return "disabled"
    if namespace in config.excluded_namespaces:
        return "excluded"
    if mode is HintMode.AUTO:
        limit_aware = config.limit_aware
        if limit_aware.namespace_enforcement.get(namespace, limit_aware.enforcement) is not Enforcement.DENY:
            return "not-enforced"
    if spec.get("nodeName"):
        return "node-name-set"
    scheduler = spec.get("schedulerName") or DEFAULT_SCHEDULER  # as the apiserver defaults it
    if not isinstance(scheduler, str) or scheduler not in config.placement_hints.scheduler_names:
        return "other-scheduler"
    if MIRROR_ANNOTATION in annotations:
        return "mirror-pod"
    if daemonset:
        return "daemonset"
    return None


def choose_operator(fit_values: int, unfit_values: int, unlabelled_unfit: bool, max_nodes: int) -> Operator:
    """NotIn the nodes without room when that list is the shorter one and names every one of
    them (NotIn also matches a node without the label, so never when such a node lacks room);
    else In the fitting nodes (capped to those with the most room past *max_nodes*)."""
    if not unlabelled_unfit and unfit_values < fit_values and unfit_values <= max_nodes:
        return Operator.NOT_IN
    return Operator.IN


def preferred_term(operator: Operator, values: Sequence[str], weight: int) -> dict[str, Any]:
    expression = {"key": HOSTNAME_LABEL, "operator": str(operator), "values": list(values)}
    return {"weight": weight, "preference": {"matchExpressions": [expression]}}


def digest_of(canonical: bytes) -> str:
    """The digest of a term's canonical JSON: its keys sorted, no spaces, UTF-8 (as `term_digest`)."""
    return hashlib.sha256(canonical).hexdigest()[:16]


def term_digest(term: Mapping[str, Any]) -> str:
    """What the annotation records to find our term again (a reinvocation replaces it). The webhook
    encodes the canonical JSON of its own new term faster (orjson, the same bytes) and passes the
    digest to `hint_annotation` and `hint_patch`."""
    return digest_of(json.dumps(term, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())


def hint_annotation(
    term: Mapping[str, Any], fit: int, eligible: int, capped: bool, digest: str | None = None
) -> str:
    """What was preferred and why: how many nodes had room, of how many eligible; *digest* is
    term_digest(term), when known."""
    expression = term["preference"]["matchExpressions"][0]
    return json.dumps(
        {
            "operator": expression["operator"],
            "named": len(expression["values"]),
            "fit": fit,
            "eligible": eligible,
            "capped": capped,
            "weight": term["weight"],
            "term": digest or term_digest(term),
        },
        separators=(",", ":"),
    )


# Our annotation is about 110 characters; a longer value is not ours, and a bound on the length
# bounds the nesting the JSON decoder may recurse into (a deep one would exhaust its recursion).
MAX_ANNOTATION_CHARS = 512
# Our term is a term object, its preference, the expressions list, the expression, its values
TERM_LEVELS = 5


def recorded_digest(annotations: Mapping[str, Any]) -> str | None:
    """The digest of the term an earlier invocation added, from its annotation (None: none)."""
    text = annotations.get(HINT_ANNOTATION)
    if not isinstance(text, str) or len(text) > MAX_ANNOTATION_CHARS:
        return None
    try:
        recorded = json.loads(text)
    except ValueError:
        return None
    digest = recorded.get("term") if isinstance(recorded, dict) else None
    return digest if isinstance(digest, str) else None


def _nested_within(value: Any, levels: int) -> bool:
    """Is *value* at most *levels* lists or objects deep? Only such an item can be our term, and
    only such an item is digested (the encoder would exhaust its recursion on a deep one)."""
    if isinstance(value, dict):
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return True
    return levels > 0 and all(_nested_within(child, levels - 1) for child in children)


def _index_of_ours(preferred: list[Any], digest: str | None) -> int | None:
    """Where the term with the recorded *digest* stands among the pod's preferred terms."""
    if digest is None:
        return None
    for index, item in enumerate(preferred):
        if is_object(item) and _nested_within(item, TERM_LEVELS) and term_digest(item) == digest:
            return index
    return None


def _member(parent: Any, key: str, where: str, kind: type) -> Any:
    """*parent[key]* when it is a *kind* (None: absent or null, or *parent* is None); anything
    else is malformed, left for the apiserver to reject."""
    value = parent.get(key) if parent is not None else None
    if value is not None and not isinstance(value, kind):
        raise NotAPod(f"{where} is not {'a list' if kind is list else 'an object'}")
    return value


def hint_patch(
    pod: Mapping[str, Any], term: Mapping[str, Any], annotation: str, digest: str | None = None
) -> list[dict[str, Any]]:
    """The JSONPatch adding *term* (whose term_digest is *digest*, when known) and the annotation,
    at the deepest member that exists (an `add` on an existing member replaces it: `affinity: {}`
    must stay an object we add into).

    An earlier term of ours (its digest in the annotation) is replaced where it stands; an
    identical one means no patch at all. The pod's own terms are never touched.
    """
    spec, metadata = pod.get("spec"), pod.get("metadata")
    if not is_object(spec) or (metadata is not None and not is_object(metadata)):
        raise NotAPod("pod has no spec object")
    annotations = _member(metadata, "annotations", "metadata.annotations", dict)
    affinity = _member(spec, "affinity", "spec.affinity", dict)
    node_affinity = _member(affinity, "nodeAffinity", "spec.affinity.nodeAffinity", dict)
    preferred = _member(node_affinity, PREFERRED, "spec.affinity.nodeAffinity." + PREFERRED, list)
    ops: list[dict[str, Any]] = []
    earlier = recorded_digest(annotations or {})
    ours = _index_of_ours(preferred or [], earlier)
    if ours is not None:
        if earlier == (digest or term_digest(term)):
            return []
        ops.append(
            {
                "op": "replace",
                "path": pointer("spec", "affinity", "nodeAffinity", PREFERRED, ours),
                "value": term,
            }
        )
    elif preferred is not None:
        ops.append(
            {"op": "add", "path": pointer("spec", "affinity", "nodeAffinity", PREFERRED, "-"), "value": term}
        )
    elif node_affinity is not None:
        ops.append(
            {"op": "add", "path": pointer("spec", "affinity", "nodeAffinity", PREFERRED), "value": [term]}
        )
    elif affinity is not None:
        ops.append({"op": "add", "path": "/spec/affinity/nodeAffinity", "value": {PREFERRED: [term]}})
    else:
        ops.append({"op": "add", "path": "/spec/affinity", "value": {"nodeAffinity": {PREFERRED: [term]}}})
    if metadata is None:
        ops.append(
            {"op": "add", "path": "/metadata", "value": {"annotations": {HINT_ANNOTATION: annotation}}}
        )
    elif annotations is None:
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {HINT_ANNOTATION: annotation}})
    else:
        ops.append(
            {"op": "add", "path": pointer("metadata", "annotations", HINT_ANNOTATION), "value": annotation}
        )
    return ops
