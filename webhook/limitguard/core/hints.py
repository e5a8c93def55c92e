"""Placement hints: one small preferred node-affinity term that favours the nodes with room for a pod.

kube-scheduler ranks nodes by requests, so the nodes full by limits (light by requests) are the ones
it prefers, and a denied binding sends the pod back to the same node. The leader keeps each node's
limit room as labels (limitguard.core.roomlabels); the hint is one *preferred* term with a `Gt`
requirement per limited, ratio'd resource over those labels. It names no node, so its size does not
depend on the cluster, and kube-scheduler judges it against the labels at each attempt: it stays
current while the pod waits and covers nodes added later. It is never a required term: labels lag
the cluster by the write queue, and a stale required term could keep a pod off a node with room.
Everything here is a plain function.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from limitguard.core.config import DEFAULT_SCHEDULER, Config, Enforcement, HintMode
from limitguard.core.defaults import MIRROR_ANNOTATION, NotAPod, pointer
from limitguard.core.objects import is_object
from limitguard.core.roomlabels import gt_value, room_label_key

HINT_ANNOTATION = "limitguard.io/placement-hint"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

# (resource, its Gt value), in resource order
Requirements = list[tuple[str, int]]


def skip_reason(
    config: Config, namespace: str, spec: Mapping[str, Any], annotations: Mapping[str, Any], daemonset: bool
) -> str | None:
    """Why the pod gets no hint whatever its limits (a metrics reason), or None.

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


def labels_meant(config: Config) -> bool:
    """Whether hints may be given in some namespace, so the leader keeps the room labels (once a
    ratio applies): Always from the start, Auto once some namespace's effective enforcement is
    Deny, Never not at all."""
    mode = config.placement_hints.mode
    if mode is HintMode.NEVER:
        return False
    if mode is HintMode.ALWAYS:
        return True
    limit_aware = config.limit_aware
    return limit_aware.enforcement is Enforcement.DENY or any(
        action is Enforcement.DENY for action in limit_aware.namespace_enforcement.values()
    )


def requirements(pod_limits: Mapping[str, int], labelled: Callable[[str], bool]) -> Requirements | str:
    """One `Gt` value per resource the pod limits whose room label some node carries (a label no
    node carries would match no node, and the term with it), or why there is no hint: `no-limits`,
    `no-room-labels`, or `out-of-range` (a limit no int64 value expresses: no hint rather than a term
    NodeAffinity's PreScore would fail on)."""
    limited = sorted(resource for resource, amount in pod_limits.items() if amount > 0)
    if not limited:
        return "no-limits"
    found: Requirements = []
    for resource in limited:
        key = room_label_key(resource)
        if key is None or not labelled(key):
            continue
        value = gt_value(pod_limits[resource], resource)
        if value is None:
            return "out-of-range"
        found.append((resource, value))
    return found or "no-room-labels"


def preferred_term(found: Sequence[tuple[str, int]], weight: int) -> dict[str, Any]:
    """The term: every requirement in one term, so a node matches only with room for all of them."""
    expressions = [
        {"key": room_label_key(resource), "operator": "Gt", "values": [str(value)]}
        for resource, value in found
    ]
    return {"weight": weight, "preference": {"matchExpressions": expressions}}


def digest_of(canonical: bytes) -> str:
    """The digest of a term's canonical JSON: its keys sorted, no spaces, UTF-8 (as `term_digest`)."""
    return hashlib.sha256(canonical).hexdigest()[:16]


def term_digest(term: Mapping[str, Any]) -> str:
    """What the annotation records to find our term again (a reinvocation replaces it). The webhook
    encodes the canonical JSON of its own new term faster (orjson, the same bytes) and passes the
    digest to `hint_annotation` and `hint_patch`."""
    return digest_of(json.dumps(term, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())


def hint_annotation(resources: Sequence[str], weight: int, digest: str) -> str:
    """What was preferred: the resources the term requires room for, its weight, and the digest of
    the term (term_digest) to find it again. Only what the pod itself carries: no node is named and
    no count of nodes with room is given."""
    return json.dumps({"resources": list(resources), "weight": weight, "term": digest}, separators=(",", ":"))


# Our annotation is under 200 characters for a few resources; a longer value is not ours, and a
# bound on the length bounds the nesting the JSON decoder may recurse into (a deep one would
# exhaust its recursion).
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
