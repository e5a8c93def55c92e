"""The mutating webhook: defaults for best-effort pods, limitguard's scheduler, then placement hints
(Pod CREATE only).

Defaults are opted into per namespace (label `limitguard.io/defaults: enabled`, unless the
configuration says `requireNamespaceLabel: false`); inside an opted-in namespace the annotation
`limitguard.io/skip-defaults: "true"` on the namespace or the pod still opts out. A pod sent to
limitguard's own scheduler (label `limitguard.io/use-scheduler: enabled`) is placed exactly by it, so
it gets no hint. Placement hints (limitguard.admission.hints) are computed on the pod as the defaults
patch leaves it.

The scheduler swap reads the namespace label from the cache on `/mutate`, which every namespace may
reach. `/mutate-scheduler` is only called by the webhook entry whose namespaceSelector matched the
label at the apiserver, so it trusts that: a namespace created with the label a moment ago is not
in the cache yet, and its first pods would silently keep `default-scheduler`.
"""

from __future__ import annotations

import logging
from typing import Any

from limitguard.admission.hints import HintCount, Hinter
from limitguard.admission.review import AdmissionRequest
from limitguard.core.config import BestEffortDefaults, Config
from limitguard.core.defaults import (
    NAMESPACE_DEFAULTS_ANNOTATION,
    NotAPod,
    best_effort_patch,
    namespace_defaults,
    opted_in,
    patch_shape,
    skips_defaults,
)
from limitguard.core.memokeys import small_key
from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.response import Response, allowed, patched, warning
from limitguard.core.text import clip
from limitguard.core.usescheduler import scheduler_operation, uses_scheduler, with_operation
from limitguard.state.records import controller_of
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

# Bounded; past the bound, new shapes are computed and not kept (so are shapes too large to keep,
# core.memokeys). Pods of one workload share a shape, so a ReplicaSet's scale-up computes its patch once.
MAX_REMEMBERED_SHAPES = 4096


class Mutator:
    """Answers `POST /mutate` (and its one-part routes). Never denies: a broken object is left for
    the apiserver to reject. *defaults*, *scheduler* and *hints* choose the parts it does;
    *namespace_selected*: the webhook entry's namespaceSelector already chose the namespaces that
    asked for limitguard's scheduler (the `/mutate-scheduler` route), so the label is not read again."""

    def __init__(
        self,
        state: ClusterState,
        config: Config,
        *,
        defaults: bool = True,
        scheduler: bool = True,
        hints: bool = True,
        count_hint: HintCount | None = None,
        namespace_selected: bool = False,
    ) -> None:
        self.state = state
        self.config = config
        self.defaults = defaults
        self.scheduler = scheduler and bool(config.use_scheduler_name)
        self.namespace_selected = namespace_selected
        self.hinter = Hinter(state, config, count_hint) if hints else None
        # pod shape (core.defaults.patch_shape) -> its answer without warnings; answers are frozen
        # (the patch too: core.response.JsonPatch), so every pod of a shape can share one.
        self._answers: dict[tuple[object, ...], Response] = {}

    def __call__(self, request: AdmissionRequest) -> Response:
        if not (request.group == "" and request.target == "pods" and request.operation == "CREATE"):
            return allowed("not-checked")
        pod: Any = request.object
        metadata = object_or_empty(pod.get("metadata") if is_object(pod) else None)
        namespace = request.namespace or metadata.get("namespace", "")
        swap = self._scheduler_operation(pod, namespace) if self.scheduler else None
        if swap is None:
            return self.answer_for(pod, namespace, request.uid)
        return with_operation(self._defaults_part(pod, namespace, request.uid), swap)

    def _scheduler_operation(self, pod: Any, namespace: str) -> dict[str, Any] | None:
        """The patch operation sending *pod* to limitguard's scheduler, when its namespace asked."""
        if namespace in self.config.excluded_namespaces:
            return None
        if not self.namespace_selected:
            record = self.state.namespace(namespace)
            if record is None or not uses_scheduler(record.labels):
                return None
        metadata = object_or_empty(pod.get("metadata") if is_object(pod) else None)
        daemonset = controller_of(metadata) in self.config.limit_aware.daemonset_kinds
        return scheduler_operation(pod, self.config.use_scheduler_name, daemonset)

    def answer_for(self, pod: Any, namespace: str, uid: str = "") -> Response:
        """The answer to creating *pod* in *namespace* without a scheduler change (also what
        `limitguard explain` applies)."""
        answer = self._defaults_part(pod, namespace, uid)
        if self.hinter is None:
            return answer
        return self.hinter.add_to(answer, pod, namespace)

    def _defaults_part(self, pod: Any, namespace: str, uid: str) -> Response:
        return self.defaults_for(pod, namespace, uid) if self.defaults else allowed("defaults-off")

    def defaults_for(self, pod: Any, namespace: str, uid: str = "") -> Response:
        """The defaults' answer (remembered by the pod's shape, warnings added per namespace)."""
        defaults = self.config.best_effort_defaults
        if not defaults.enabled:
            return allowed("disabled")
        if namespace in self.config.excluded_namespaces:
            return allowed("excluded")
        warnings: tuple[str, ...] = ()
        namespace_record = self.state.namespace(namespace)
        if defaults.require_namespace_label:
            # Opt-in: nothing is changed unasked, so a namespace not (yet) in the cache gets nothing.
            if namespace_record is None:
                log.debug("not defaulting: namespace %s is not in the cache yet", clip(namespace))
                return allowed("namespace-unknown")
            if not opted_in(namespace_record.labels):
                return allowed("namespace-not-opted-in")
        if namespace_record is not None:
            if skips_defaults(namespace_record.annotations):
                return allowed("namespace-opt-out")
            defaults, problem = namespace_defaults(
                defaults, namespace_record.annotations.get(NAMESPACE_DEFAULTS_ANNOTATION)
            )
            if problem:
                log.warning("namespace %s: %s; using cluster defaults", namespace, problem)
                warnings = (
                    warning(f"limitguard: namespace {namespace}: bad {NAMESPACE_DEFAULTS_ANNOTATION}"),
                )
        try:
            answer = self._defaults_answer(pod, defaults)
        except NotAPod as error:
            log.info("not defaulting a malformed pod", extra={"uid": uid, "problem": str(error)})
            return allowed("malformed")
        if not warnings:
            return answer
        if answer.patch is None:
            return allowed(answer.reason, *warnings)
        return patched(answer.reason, answer.patch, *warnings)

    def _defaults_answer(self, pod: Any, defaults: BestEffortDefaults) -> Response:
        """The answer for *pod* without warnings, remembered by the pod's shape."""
        shape = patch_shape(pod, defaults)
        answer = self._answers.get(shape) if shape is not None else None
        if answer is None:
            patch = best_effort_patch(pod, defaults)
            answer = patched("defaulted", patch) if patch else allowed("not-best-effort")
            if shape is not None and len(self._answers) < MAX_REMEMBERED_SHAPES and small_key(shape):
                self._answers[shape] = answer
        return answer
