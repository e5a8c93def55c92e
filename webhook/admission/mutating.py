"""The mutating webhook: defaults for best-effort pods (Pod CREATE only)."""

from __future__ import annotations

import logging
from typing import Any

from limitguard.admission.review import AdmissionRequest
from limitguard.core.config import Config
from limitguard.core.defaults import (
    NAMESPACE_DEFAULTS_ANNOTATION,
    NotAPod,
    best_effort_patch,
    namespace_defaults,
    skips_defaults,
)
from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.response import Response, allowed, patched, warning
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)


class Mutator:
    """Answers `POST /mutate`. Never denies: a broken object is left for the apiserver to reject."""

    def __init__(self, state: ClusterState, config: Config) -> None:
        self.state = state
        self.config = config

    def __call__(self, request: AdmissionRequest) -> Response:
        defaults = self.config.best_effort_defaults
        if not (request.group == "" and request.target == "pods" and request.operation == "CREATE"):
            return allowed("not-checked")
        if not defaults.enabled:
            return allowed("disabled")
        pod: Any = request.object
        metadata = object_or_empty(pod.get("metadata") if is_object(pod) else None)
        namespace = request.namespace or metadata.get("namespace", "")
        if namespace in self.config.excluded_namespaces:
            return allowed("excluded")
        warnings: tuple[str, ...] = ()
        namespace_record = self.state.namespace(namespace)
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
            patch = best_effort_patch(pod, defaults)
        except NotAPod as error:
            log.info("not defaulting a malformed pod", extra={"uid": request.uid, "problem": str(error)})
            return allowed("malformed")
        if not patch:
            return allowed("not-best-effort", *warnings)
        return patched("defaulted", patch, *warnings)
