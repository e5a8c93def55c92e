"""Placement hints at pod CREATE: the edge between the mutator, the node table and core.hints.

The mutator calls `Hinter.add_to` with its own answer (the defaults patch, if any): the hint is
computed on the pod as that patch leaves it, so a defaulted pod is hinted by its new limits, and
its operations go after the defaults'. A hinted answer is built per pod, never remembered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from limitguard.core.config import Config
from limitguard.core.defaults import NotAPod, with_adds
from limitguard.core.eligibility import Placement
from limitguard.core.hints import digest_of, hint_annotation, hint_patch, preferred_term, skip_reason
from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.podlimits import PodRules, PodSpecError, pod_limits
from limitguard.core.response import JsonPatch, Response, patched
from limitguard.state.placement import HintNodes, hint_nodes
from limitguard.state.records import controller_of
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

# Distinct pod shapes remembered, and the largest remembered (what the hint reads of a pod, as JSON,
# with the defaults patch): at most 4 MiB of keys.
MAX_REMEMBERED_SPECS = 256
MAX_REMEMBERED_KEY_BYTES = 16 * 1024
# What the hint reads of a pod's spec (its limits, its placement, where its term goes) and of each
# container (its limits, a sidecar's restartPolicy, the name its resize status is found by).
_SPEC_READ = ("nodeSelector", "affinity", "tolerations", "overhead", "resources")
_CONTAINER_READ = ("name", "resources", "restartPolicy")
# Hinted patches remembered per spec and node-table version, by the pod's annotations (pods of one
# workload usually share theirs), and their bytes in all, keys included: a term may name 5,000
# hostnames (330 KB), and a pod's annotations take up to 256 KiB.
MAX_PATCHES_PER_SPEC = 16
MAX_PATCH_BYTES = 8 << 20

# (outcome, reason): ("given", "In" | "NotIn" | "In-capped") or ("skipped", why)
HintCount = Callable[[tuple[str, str]], None]


def _ignore(key: tuple[str, str]) -> None:
    pass


@dataclass(slots=True)
class _Remembered:
    """A pod spec's limits and placement, and its nodes as of one version of the node table."""

    limits: Mapping[str, int]
    placement: Placement
    rules: PodRules  # the release's pod rules the limits were counted by
    nodes: HintNodes | str | None = None
    version: int = -1
    # the whole patch (the defaults' operations, then the hint's) and the metrics reason, for
    # *nodes*, by the pod's annotations as JSON: a burst's pods share it until the table changes
    patches: dict[bytes, tuple[JsonPatch | None, str]] = field(default_factory=dict)
    remembered: bool = False  # kept in the Hinter's table (else built for one pod and dropped)

    def patch_bytes(self) -> int:
        """The remembered patches' bytes, with their keys' (annotations may take 256 KiB)."""
        return sum(_size(key, found) for key, found in self.patches.items())


def _patch_key(pod: Mapping[str, Any]) -> bytes | None:
    """What hint_patch reads of *pod* besides its spec (which the remembered entry's key holds):
    its annotations, and whether metadata is an object at all (that decides the patch's paths)."""
    raw = pod.get("metadata")
    try:
        return b"o" + orjson.dumps(raw.get("annotations")) if is_object(raw) else b"v" + orjson.dumps(raw)
    except TypeError:  # not JSON (only a test can build such a pod)
        return None


def _shape_key(pod: Mapping[str, Any]) -> bytes:
    """What the hint reads of *pod*'s spec and status, as JSON: pods of one workload share it. Not
    the whole spec: the apiserver's ServiceAccount admission names every pod's token volume
    `kube-api-access-` and five random characters, in spec.volumes and each container's
    volumeMounts, so no two pods of a workload have the same spec."""
    spec = object_or_empty(pod.get("spec"))
    parts: list[Any] = [spec.get(member) for member in _SPEC_READ]
    for member in ("containers", "initContainers"):
        containers = spec.get(member)
        if type(containers) is list:
            containers = [
                {name: item.get(name) for name in _CONTAINER_READ} if type(item) is dict else item
                for item in containers
            ]
        parts.append(containers)
    parts.append(pod.get("status"))
    return orjson.dumps(parts)


def _size(key: bytes, found: tuple[JsonPatch | None, str]) -> int:
    return len(key) + (len(found[0].encoded) if found[0] is not None else 0)


class Hinter:
    """Adds the placement hint to the mutator's answers; counts hints given and skipped."""

    def __init__(self, state: ClusterState, config: Config, count: HintCount | None = None) -> None:
        self.state = state
        self.config = config
        self.count = count or _ignore
        # a pod's shape (_shape_key, and the defaults patch) -> what the hint needs of it
        self._remembered: dict[bytes, _Remembered] = {}
        self._patch_bytes = 0  # of every remembered entry's patches

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
        if not self.state.ready:
            return None, "state-incomplete"
        patch = defaults.patch if defaults is not None else None
        kept = self._remembered_for(pod, patch)
        nodes = kept.nodes
        assert nodes is not None  # found by _remembered_for
        if isinstance(nodes, str):
            return None, nodes
        key = _patch_key(pod)  # with the shape's key, all that hint_patch reads
        found = kept.patches.get(key) if key is not None else None
        if found is None:
            found = self._patch(
                with_adds(pod, patch.operations()) if patch is not None else pod, nodes, patch
            )
            if key is not None and kept.remembered:
                self._remember_patch(kept, key, found)
        return found

    def _remember_patch(self, kept: _Remembered, key: bytes, found: tuple[JsonPatch | None, str]) -> None:
        """Keep *found* for *key*'s pods, within MAX_PATCHES_PER_SPEC and MAX_PATCH_BYTES."""
        size = _size(key, found)
        if len(kept.patches) >= MAX_PATCHES_PER_SPEC:
            self._forget_patches(kept)
        if self._patch_bytes + size > MAX_PATCH_BYTES:
            for entry in self._remembered.values():
                entry.patches.clear()
            self._patch_bytes = 0
            if size > MAX_PATCH_BYTES:
                return
        kept.patches[key] = found
        self._patch_bytes += size

    def _forget_patches(self, kept: _Remembered) -> None:
        self._patch_bytes -= kept.patch_bytes()
        kept.patches.clear()

    def _remembered_for(self, pod: Mapping[str, Any], patch: JsonPatch | None) -> _Remembered:
        """What *pod*'s spec (as *patch* leaves it) needs, its nodes (hint_nodes) found on the node
        table as it is now. The pods of one workload have one shape: its limits and placement are
        parsed once, and its nodes found once per version of the node table (a burst of pods
        created between two bindings shares them, and their patches)."""
        table = self.state.node_table()
        try:
            key: bytes | None = _shape_key(pod)
            if patch is not None:
                key += patch.encoded
        except TypeError:  # not JSON (only a test can build such a pod): not worth remembering
            key = None
        kept = self._remembered.get(key) if key is not None else None
        if kept is None or kept.rules is not self.state.pod_rules:  # the cluster's release changed
            if kept is not None:
                self._forget_patches(kept)  # replaced below
            if patch is not None:
                pod = with_adds(pod, patch.operations())
            spec = object_or_empty(pod.get("spec"))
            rules = self.state.pod_rules
            kept = _Remembered(
                pod_limits(spec, object_or_empty(pod.get("status")), rules), Placement(spec), rules
            )
            if key is not None and len(key) <= MAX_REMEMBERED_KEY_BYTES:
                if len(self._remembered) >= MAX_REMEMBERED_SPECS:
                    self._remembered.clear()
                    self._patch_bytes = 0
                self._remembered[key] = kept
                kept.remembered = True
        if kept.version != table.version or kept.nodes is None:
            hints = self.config.placement_hints
            kept.nodes = hint_nodes(
                table, kept.limits, kept.placement, self.config.limit_aware.default_ratios, hints.max_nodes
            )
            kept.version = table.version
            self._forget_patches(kept)
        return kept

    def _patch(
        self, pod: Mapping[str, Any], found: HintNodes, defaults: JsonPatch | None
    ) -> tuple[JsonPatch | None, str]:
        term = preferred_term(found.operator, found.values, self.config.placement_hints.weight)
        digest = digest_of(orjson.dumps(term, option=orjson.OPT_SORT_KEYS))  # term_digest's bytes, 10x faster
        annotation = hint_annotation(term, found.fit, found.eligible, found.capped, digest)
        ops = hint_patch(pod, term, annotation, digest)
        if not ops:
            return None, "unchanged"  # a reinvocation whose term is the one already there
        if defaults is not None:
            ops = defaults.operations() + ops
        reason = f"{found.operator}-capped" if found.capped else str(found.operator)
        # encoded here: the core's JsonPatch.of (the standard library's encoder) takes ~30 us for 500 names
        return JsonPatch(orjson.dumps(ops)), reason
