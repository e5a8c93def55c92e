"""The validating webhook: routes each request to the check its resource needs.

This is the edge between the cluster state and the pure policy: it looks things up, calls
`limitguard.core.limitaware`, and records approved bindings in the ledger.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from limitguard.admission.review import AdmissionRequest
from limitguard.core.config import Config, LimitAwareConfig, NotReadyPolicy
from limitguard.core.eligibility import Placement
from limitguard.core.limitaware import check_on_node, check_resize, grown_limits
from limitguard.core.objects import object_or_empty as _map
from limitguard.core.podlimits import PodSpecError, pod_amounts, pod_limits
from limitguard.core.quantity import format_units
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.core.response import BAD_REQUEST, FORBIDDEN, Response, allowed, errored
from limitguard.state.records import PodRecord, controller_of, is_mirror_pod, node_ratio_override
from limitguard.state.scan import UnboundVerdicts
from limitguard.state.store import ClusterState

ConfigMapCheck = Callable[[Mapping[str, Any]], Response | None]


class Validator:
    """Answers `POST /validate`."""

    def __init__(
        self,
        state: ClusterState,
        config: Config,
        configmap_check: ConfigMapCheck | None = None,
    ) -> None:
        self.state = state
        self.config = config
        self._configmap_check = configmap_check
        # Scheduler-config validation is the one check that can take seconds (2 s for a 1 MB
        # ConfigMap): it runs in a worker thread, one at a time, so bindings keep being answered on
        # the loop meanwhile whoever sends ConfigMap reviews.
        self._configmap_slot = asyncio.Semaphore(1)
        # limitAware.namespaceEnforcement: each listed namespace's configuration, built once
        self._in_namespace = config.limit_aware.per_namespace()
        self._unbound = UnboundVerdicts()  # a burst of one workload's pods shares one verdict
        # (group, resource, subresource, operation): the request's own fields, no string built per call
        self._routes: dict[tuple[str, str, str, str], Callable[[AdmissionRequest], Response]] = {
            ("", "pods", "binding", "CREATE"): self.binding,
            ("", "bindings", "", "CREATE"): self.binding,
            ("", "pods", "", "CREATE"): self.pod_create,
            ("", "pods", "resize", "UPDATE"): self.pod_resize,
            ("", "nodes", "", "CREATE"): self.node_write,
            ("", "nodes", "", "UPDATE"): self.node_write,
        }

    def __call__(self, request: AdmissionRequest) -> Response | Coroutine[Any, Any, Response]:
        """The answer; a coroutine for a ConfigMap (validated off the loop), a Response otherwise."""
        if request.group == "" and request.resource == "configmaps" and not request.sub_resource:
            if request.operation in ("CREATE", "UPDATE") and self._configmap_check is not None:
                return self._configmap(_map(request.object))
            return allowed("not-checked")
        route = self._routes.get((request.group, request.resource, request.sub_resource, request.operation))
        if route is None:
            return allowed("not-checked")
        return route(request)

    async def _configmap(self, configmap: Mapping[str, Any]) -> Response:
        assert self._configmap_check is not None
        async with self._configmap_slot:
            response = await asyncio.to_thread(self._configmap_check, configmap)
        return response or allowed("no-scheduler-config")

    # -- helpers ------------------------------------------------------------------------------
    def _excluded(self, namespace: str) -> bool:
        return namespace in self.config.excluded_namespaces

    def _limit_aware(self, namespace: str) -> LimitAwareConfig:
        """The limit-aware configuration for pods of *namespace* (its own enforcement, if any)."""
        return self._in_namespace.get(namespace) or self.config.limit_aware

    def _incomplete(self, why: str) -> Response:
        """The answer when the state cannot decide (not synced, pod or node unknown)."""
        if self.config.while_not_ready is NotReadyPolicy.DENY:
            return errored(
                "state-incomplete",
                f"limitguard cannot check this yet: {why}; retry shortly",
                503 if not self.state.ready else FORBIDDEN,
            )
        return allowed("state-incomplete", f"limitguard: not checked, {why}")

    def _on_node(
        self,
        request: AdmissionRequest,
        subject: str,
        pod_key: str,
        current: PodRecord | None,
        node_name: str,
        limits: Mapping[str, int],
        exempt: str | None,
        held_for_others: Mapping[str, int] | None = None,
        reserve: bool = True,
        sources: Mapping[str, str] | None = None,
    ) -> Response:
        """*current* is the cache's record of the pod (None when it has none yet); *reserve* False
        judges without holding room (the apiserver will refuse the write anyway); *sources*: which
        limits are requests (PodAmounts.sources), for the denial."""
        node = self.state.node(node_name)
        if node is None:
            return self._incomplete(f'node "{node_name}" is not in the cache')
        allocated = self.state.allocated(node_name)
        already_counted = current is not None and current.counted_node == node_name
        if already_counted:
            # A repeated request for a pod the cache shows on this node: do not count it twice.
            allocated = {r: a - current.limits.get(r, 0) for r, a in allocated.items()}
        elif retried := self.state.ledger.holding(pod_key, node.name):
            # The same binding sent again (kube-scheduler 1.37 retries bindings on transient
            # errors): judged as the first was; the reservation below replaces its own entry.
            allocated = {r: a - retried.get(r, 0) for r, a in allocated.items()}
        if held_for_others:
            allocated = _plus(allocated, held_for_others)
        verdict = check_on_node(
            subject,
            limits,
            node,
            allocated,
            self._limit_aware(pod_key.partition("/")[0]),
            exempt=exempt is not None,
            exempt_reason=exempt or "",
            sources=sources,
        )
        if verdict.allowed and not request.dry_run and limits and not already_counted and reserve:
            # node.name, not node_name: the record's shared string, so the ledger's and the node
            # table's lookups of it match by identity instead of comparing the characters
            self.state.ledger.reserve(node.name, pod_key, limits)
        return verdict

    def _exemption(self, controller: tuple[str, str] | None, mirror: bool) -> str | None:
        """Why a pod is never rejected (it still counts), or None."""
        if mirror:
            return "exempt-mirror-pod"  # the kubelet runs the static pod whatever we answer
        if self.config.limit_aware.exempts(controller):
            return "exempt-daemonset"
        return None

    # -- routes -------------------------------------------------------------------------------
    def binding(self, request: AdmissionRequest) -> Response:
        namespace, name, uid, node_name = _binding_fields(request)
        if not node_name:
            return errored("malformed", "binding has no target.name")
        if self._excluded(namespace):
            return allowed("excluded")
        if not self.state.ready:
            return self._incomplete("cluster state is still syncing")
        pod = self.state.pod(namespace, name)
        if pod is None or (uid and pod.uid and uid != pod.uid):
            return self._incomplete(f"pod {namespace}/{name} is not in the cache yet")
        subject = f"binding pod {namespace}/{name} to node {node_name}:"
        exempt = self._exemption(pod.controller, pod.mirror)
        # As the scheduler's Filter does (addNominatedPods): room freed for a preemptor of equal or
        # higher priority is not this pod's to take.
        nominated = self.state.nominated_room(node_name, pod.priority, pod.key)
        # Room is held only for a pod the cache shows pending: the apiserver refuses to bind a pod
        # already bound elsewhere, so such a review (a stale retry, or a forgery) must hold nothing.
        pending = not pod.node_name
        verdict = self._on_node(
            request,
            subject,
            pod.key,
            pod,
            node_name,
            pod.limits,
            exempt,
            nominated,
            reserve=pending,
            sources=pod.amounts.sources,
        )
        if nominated and verdict.message and verdict.action != "allow":
            held = ", ".join(
                f"{resource} {format_units(resource, amount)}" for resource, amount in nominated.items()
            )
            note = f"; allocated includes {held} held for nominated pods of equal or higher priority"
            verdict = dataclasses.replace(verdict, message=verdict.message + note)
        if pod.group and verdict.message and verdict.action != "allow":
            note = (
                f"; the pod belongs to pod group {pod.group}, whose members are bound one by one:"
                " those already bound stay bound"
            )
            verdict = dataclasses.replace(verdict, message=verdict.message + note)
        return verdict

    def pod_create(self, request: AdmissionRequest) -> Response:
        pod = _map(request.object)
        metadata = _map(pod.get("metadata"))
        namespace = str(metadata.get("namespace") or request.namespace)
        name = request.object_name()  # the log line's name too, `prefix*` for a generateName pod
        if self._excluded(namespace):
            return allowed("excluded")
        spec = _map(pod.get("spec"))
        try:
            amounts = pod_amounts(spec, _map(pod.get("status")), self.state.pod_rules)
            placement = None if spec.get("nodeName") else Placement(spec)
        except PodSpecError as error:
            return errored("malformed", f"pod {namespace}/{name}: {error}", BAD_REQUEST)
        limits = amounts.limits
        if not limits:
            return allowed("no-limits")
        if not self.state.ready:
            return self._incomplete("cluster state is still syncing")
        exempt = self._exemption(controller_of(metadata), is_mirror_pod(metadata))
        node_name = spec.get("nodeName")
        if placement is None:
            subject = f"pod {namespace}/{name} (spec.nodeName {node_name})"
            current = self.state.pod(namespace, name)
            return self._on_node(
                request,
                subject,
                f"{namespace}/{name}",
                current,
                str(node_name),
                limits,
                exempt,
                sources=amounts.sources,
            )
        # Is any eligible node left with room for its limits? The node table answers (state.scan),
        # remembered per pod shape until the table changes.
        return self._unbound.verdict(
            self.state.node_table(),
            f"pod {namespace}/{name}",
            limits,
            placement,
            self.state.node,
            self.state.allocated,
            self._limit_aware(namespace),
            exempt_reason=exempt,
            sources=amounts.sources,
        )

    def pod_resize(self, request: AdmissionRequest) -> Response:
        """In-place resize: effective values on both sides (resize status included, SPEC 1); the
        pod's own count leaves the node's sum; approved growth is held in the ledger."""
        pod, old_pod = _map(request.object), _map(request.old_object)
        metadata = _map(pod.get("metadata"))
        namespace = str(metadata.get("namespace") or request.namespace)
        name = str(metadata.get("name") or request.name)
        if self._excluded(namespace):
            return allowed("excluded")
        try:
            # The new spec is a new desire the kubelet has yet to judge: a PodResizePending
            # Infeasible condition left by an earlier attempt must not hide it.
            rules = self.state.pod_rules
            new = pod_amounts(_map(pod.get("spec")), _without_resize_verdict(_map(pod.get("status"))), rules)
            new_limits = new.limits
            old_limits = pod_limits(_map(old_pod.get("spec")), _map(old_pod.get("status")), rules)
        except PodSpecError as error:
            return errored("malformed", f"pod {namespace}/{name}: {error}", BAD_REQUEST)
        node_name = str(
            _map(pod.get("spec")).get("nodeName") or _map(old_pod.get("spec")).get("nodeName") or ""
        )
        if not node_name:
            return allowed("unbound")
        node = self.state.node(node_name)
        if node is None or not self.state.ready:
            if not grown_limits(old_limits, new_limits):
                return allowed("lowered")  # lowering always passes, whatever the cache knows
            return self._incomplete(f'node "{node_name}" is not in the cache')
        key = f"{namespace}/{name}"
        current = self.state.pod(namespace, name)
        counted = current.limits if current is not None and current.counted_node == node_name else {}
        held = self.state.ledger.held_by(key)
        # What the node's allocated sum holds for this pod: the cache's count and any hold of ours
        # (a not-yet-seen binding or resize); the old object only when the cache has neither.
        own = _plus(counted, held) if counted or held else old_limits
        verdict = check_resize(
            f"resizing pod {namespace}/{name} on node {node_name}:",
            old_limits,
            new_limits,
            node,
            self.state.allocated(node_name),
            self._limit_aware(namespace),
            exempt=self._exemption(controller_of(metadata), is_mirror_pod(metadata)) is not None,
            counted=own,
            sources=new.sources,
        )
        grown = grown_limits(old_limits, new_limits)
        growth = {r: amount - counted.get(r, 0) for r, amount in grown.items() if amount > counted.get(r, 0)}
        if verdict.allowed and growth and not request.dry_run:
            self.state.ledger.reserve(node.name, key, {**held, **growth}, settles_at=grown)
        return verdict

    def node_write(self, request: AdmissionRequest) -> Response:
        annotations = _map(_map(_map(request.object).get("metadata")).get("annotations"))
        _, problem = node_ratio_override(annotations)
        if problem is None:
            return allowed("valid-annotation")
        old_annotations = _map(_map(_map(request.old_object).get("metadata")).get("annotations"))
        if request.operation == "UPDATE" and old_annotations.get(RATIO_ANNOTATION) == annotations.get(
            RATIO_ANNOTATION
        ):
            # Unchanged: never block kubelet or other writers of the node for an old mistake.
            return allowed(
                "malformed-annotation-unchanged", f"limitguard: {RATIO_ANNOTATION} is malformed: {problem}"
            )
        return errored(
            "malformed-annotation",
            # under 200 characters whatever the annotation holds: each echo in `problem` is cut
            f"metadata.annotations[{RATIO_ANNOTATION}]: Invalid value: {problem}",
        )


def _binding_fields(request: AdmissionRequest) -> tuple[str, str, str, str]:
    """A Binding's (namespace, name, uid, target node): the pod's from its metadata (the request's
    when absent), "" for anything missing or not a string."""
    binding = _map(request.object)
    metadata, target = _map(binding.get("metadata")), _map(binding.get("target"))
    namespace, name = metadata.get("namespace") or request.namespace, metadata.get("name") or request.name
    uid, node_name = metadata.get("uid"), target.get("name")
    return (
        str(namespace),
        str(name),
        uid if isinstance(uid, str) else "",
        node_name if isinstance(node_name, str) else "",
    )


def _plus(first: Mapping[str, int], second: Mapping[str, int]) -> dict[str, int]:
    total = dict(first)
    for resource, amount in second.items():
        total[resource] = total.get(resource, 0) + amount
    return total


def _without_resize_verdict(status: Mapping[str, Any]) -> Mapping[str, Any]:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return status
    kept = [c for c in conditions if not (isinstance(c, Mapping) and c.get("type") == "PodResizePending")]
    return {**status, "conditions": kept}
