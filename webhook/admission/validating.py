"""The validating webhook: routes each request to the check its resource needs.

This is the edge between the cluster state and the pure policy: it looks things up, calls
`webhook.core.limitaware`, and records approved bindings in the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from webhook.admission.review import AdmissionRequest, AdmissionResponse
from webhook.cluster.records import NodeRecord, is_daemonset_pod, node_ratio_override
from webhook.cluster.scan import unbound_verdict
from webhook.cluster.state import ClusterState
from webhook.core.config import Config, NotReadyPolicy
from webhook.core.eligibility import Placement
from webhook.core.limitaware import check_on_node, check_resize, check_unbound, grown_limits
from webhook.core.podlimits import PodSpecError, pod_limits
from webhook.core.ratios import ACCEPTED_FORMS, RATIO_ANNOTATION
from webhook.core.verdict import BAD_REQUEST, Verdict, allow, reject

ConfigMapCheck = Callable[[Mapping[str, Any]], AdmissionResponse | None]


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class Validator:
    """Answers `POST /validate`."""

    def __init__(
        self,
        state: ClusterState,
        config: Config,
        configmap_check: ConfigMapCheck | None = None,
        *,
        columnar: bool = True,
    ) -> None:
        self.state = state
        self.columnar = columnar  # scan nodes on the node table; False: the reference path (tests)
        self.config = config
        self._configmap_check = configmap_check
        self._routes: dict[tuple[str, str, str], Callable[[AdmissionRequest], Verdict]] = {
            ("", "pods/binding", "CREATE"): self.binding,
            ("", "bindings", "CREATE"): self.binding,
            ("", "pods", "CREATE"): self.pod_create,
            ("", "pods/resize", "UPDATE"): self.pod_resize,
            ("", "nodes", "CREATE"): self.node_write,
            ("", "nodes", "UPDATE"): self.node_write,
        }

    def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.group == "" and request.resource == "configmaps" and not request.sub_resource:
            if request.operation in ("CREATE", "UPDATE") and self._configmap_check is not None:
                return self._configmap_check(_map(request.object)) or AdmissionResponse(
                    True, "no-scheduler-config"
                )
            return AdmissionResponse(True, "not-checked")
        route = self._routes.get((request.group, request.target, request.operation))
        if route is None:
            return AdmissionResponse(True, "not-checked")
        return AdmissionResponse.from_verdict(route(request))

    # -- helpers ------------------------------------------------------------------------------
    def _excluded(self, namespace: str) -> bool:
        return namespace in self.config.excluded_namespaces

    def _incomplete(self, why: str) -> Verdict:
        """The answer when the state cannot decide (not synced, pod or node unknown)."""
        if self.config.while_not_ready is NotReadyPolicy.DENY:
            return Verdict(
                False,
                "state-incomplete",
                message=f"limitguard cannot check this yet: {why}; retry shortly",
                code=503 if not self.state.ready else 403,
                action="deny",
            )
        return allow("state-incomplete", f"limitguard: not checked, {why}")

    def _on_node(
        self,
        request: AdmissionRequest,
        subject: str,
        pod_key: str,
        node_name: str,
        limits: Mapping[str, int],
        daemonset: bool,
    ) -> Verdict:
        node = self.state.node(node_name)
        if node is None:
            return self._incomplete(f'node "{node_name}" is not in the cache')
        allocated = self.state.allocated(node_name)
        current = self.state.pod(*pod_key.split("/", 1))
        already_counted = current is not None and current.counted_node == node_name
        if already_counted:
            # A repeated request for a pod the cache shows on this node: do not count it twice.
            allocated = {r: a - current.limits.get(r, 0) for r, a in allocated.items()}
        verdict = check_on_node(
            subject,
            limits,
            node,
            allocated,
            self.config.limit_aware,
            exempt=daemonset and self.config.limit_aware.exempt_daemonset_pods,
        )
        if verdict.allowed and not request.dry_run and limits and not already_counted:
            self.state.ledger.reserve(node_name, pod_key, limits)
        return verdict

    # -- routes -------------------------------------------------------------------------------
    def binding(self, request: AdmissionRequest) -> Verdict:
        binding = _map(request.object)
        metadata = _map(binding.get("metadata"))
        namespace = str(metadata.get("namespace") or request.namespace)
        name = str(metadata.get("name") or request.name)
        target = _map(binding.get("target"))
        node_name = target.get("name")
        if not isinstance(node_name, str) or not node_name:
            return reject("malformed", "binding has no target.name")
        if self._excluded(namespace):
            return allow("excluded")
        if not self.state.ready:
            return self._incomplete("cluster state is still syncing")
        pod = self.state.pod(namespace, name)
        if pod is None or (metadata.get("uid") and pod.uid and metadata.get("uid") != pod.uid):
            return self._incomplete(f"pod {namespace}/{name} is not in the cache yet")
        subject = f"binding pod {namespace}/{name} to node {node_name}:"
        return self._on_node(request, subject, pod.key, node_name, pod.limits, pod.daemonset)

    def _candidates(self, spec: Mapping[str, Any]) -> Iterable[NodeRecord]:
        """Only nodes that can match the pod's nodeSelector, looked up in the label index."""
        selector = _map(spec.get("nodeSelector"))
        if selector:
            return self.state.nodes_labelled({str(k): str(v) for k, v in selector.items()})
        return self.state.nodes()

    def pod_create(self, request: AdmissionRequest) -> Verdict:
        pod = _map(request.object)
        metadata = _map(pod.get("metadata"))
        namespace = str(metadata.get("namespace") or request.namespace)
        name = str(metadata.get("name") or request.name)
        if self._excluded(namespace):
            return allow("excluded")
        spec = _map(pod.get("spec"))
        try:
            limits = pod_limits(spec)
            placement = None if spec.get("nodeName") else Placement(spec)
        except PodSpecError as error:
            return reject("malformed", f"pod {namespace}/{name}: {error}", BAD_REQUEST)
        if not limits:
            return allow("no-limits")
        if not self.state.ready:
            return self._incomplete("cluster state is still syncing")
        daemonset = is_daemonset_pod(metadata)
        node_name = spec.get("nodeName")
        if placement is None:
            subject = f"pod {namespace}/{name} (spec.nodeName {node_name})"
            return self._on_node(request, subject, f"{namespace}/{name}", str(node_name), limits, daemonset)
        exempt = daemonset and self.config.limit_aware.exempt_daemonset_pods
        subject = f"pod {namespace}/{name}"
        if self.columnar:
            verdict = unbound_verdict(
                self.state.node_table(),
                subject,
                limits,
                placement,
                self.state.node,
                self.state.allocated,
                self.config.limit_aware,
                exempt=exempt,
            )
            if verdict is not None:
                return verdict
        return check_unbound(
            subject,
            limits,
            placement,
            self._candidates(spec),
            self.state.allocated,
            self.config.limit_aware,
            exempt=exempt,
        )

    def pod_resize(self, request: AdmissionRequest) -> Verdict:
        pod, old_pod = _map(request.object), _map(request.old_object)
        metadata = _map(pod.get("metadata"))
        namespace = str(metadata.get("namespace") or request.namespace)
        name = str(metadata.get("name") or request.name)
        if self._excluded(namespace):
            return allow("excluded")
        try:
            new_limits = pod_limits(_map(pod.get("spec")))
            old_limits = pod_limits(_map(old_pod.get("spec")))
        except PodSpecError as error:
            return reject("malformed", f"pod {namespace}/{name}: {error}", BAD_REQUEST)
        node_name = str(
            _map(pod.get("spec")).get("nodeName") or _map(old_pod.get("spec")).get("nodeName") or ""
        )
        if not node_name:
            return allow("unbound")
        node = self.state.node(node_name)
        if node is None or not self.state.ready:
            if not grown_limits(old_limits, new_limits):
                return allow("lowered")  # lowering always passes, whatever the cache knows
            return self._incomplete(f'node "{node_name}" is not in the cache')
        return check_resize(
            f"resizing pod {namespace}/{name} on node {node_name}:",
            old_limits,
            new_limits,
            node,
            self.state.allocated(node_name),
            self.config.limit_aware,
            exempt=is_daemonset_pod(metadata) and self.config.limit_aware.exempt_daemonset_pods,
        )

    def node_write(self, request: AdmissionRequest) -> Verdict:
        annotations = _map(_map(_map(request.object).get("metadata")).get("annotations"))
        _, problem = node_ratio_override(annotations)
        if problem is None:
            return allow("valid-annotation")
        old_annotations = _map(_map(_map(request.old_object).get("metadata")).get("annotations"))
        if request.operation == "UPDATE" and old_annotations.get(RATIO_ANNOTATION) == annotations.get(
            RATIO_ANNOTATION
        ):
            # Unchanged: never block kubelet or other writers of the node for an old mistake.
            return allow(
                "malformed-annotation-unchanged", f"limitguard: {RATIO_ANNOTATION} is malformed: {problem}"
            )
        return reject(
            "malformed-annotation",
            f"metadata.annotations[{RATIO_ANNOTATION}]: Invalid value: {problem}; expected {ACCEPTED_FORMS}",
        )
