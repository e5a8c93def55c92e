"""The one set of Kubernetes object builders: nodes, namespaces, pods, containers, AdmissionReviews.

Tests, the fake apiserver and the benchmarks' synthetic clusters all build from these, so an
object's shape is decided in one place. `node` and `pod` are bare (only what a verdict reads);
`make_node`, `make_pod` and `make_namespace` are presets shaped as a real cluster serves them
(capacity, owner references, env, tolerations, status), for the live feed and the benchmarks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def node(
    name: str,
    cpu: str = "8",
    memory: str = "32Gi",
    *,
    annotations: Mapping[str, str] | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
    capacity: bool = False,
    uid: str | None = None,
) -> dict[str, Any]:
    """A Node with allocatable cpu/memory/pods (plus *extra* resources); *capacity* repeats them there."""
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {"kubernetes.io/hostname": name, **(labels or {})},
        "annotations": dict(annotations or {}),
    }
    if uid is not None:
        metadata["uid"] = uid
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}
    status: dict[str, Any] = {"allocatable": allocatable}
    if capacity:
        status["capacity"] = dict(allocatable)
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec, "status": status}


def namespace(
    name: str, *, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """A Namespace as the apiserver serves it (the name label is set by the namespace controller)."""
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {**(labels or {}), "kubernetes.io/metadata.name": name},
    }
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"kind": "Namespace", "apiVersion": "v1", "metadata": metadata, "status": {"phase": "Active"}}


def container(
    name: str = "app",
    limits: dict[str, Any] | None = None,
    requests: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    return {"name": name, "image": "registry.k8s.io/pause:3.10", "resources": resources, **fields}


def pod(
    name: str,
    *,
    namespace: str = "default",
    node_name: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    containers: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    uid: str | None = None,
    owner_kind: str | None = None,
    owner_controller: bool = True,
    owner_name: str = "owner",
    owner_uid: str = "o",
    labels: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
    **spec_fields: Any,
) -> dict[str, Any]:
    """A Pod; without *containers*, one container limited to *cpu*/*memory*. *status* adds to the phase."""
    if containers is None:
        limits = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        containers = [container(limits=limits or None)]
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if labels is not None:
        metadata["labels"] = labels
    if owner_kind:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner_kind,
                "name": owner_name,
                "uid": owner_uid,
                "controller": owner_controller,
            }
        ]
    spec: dict[str, Any] = {"containers": containers, **spec_fields}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": phase, **(status or {})},
    }


# -- presets: objects shaped as a live cluster serves them -----------------------------------------
def make_node(
    name: str, cpu: str = "8", memory: str = "32Gi", annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
    return node(
        name, cpu, memory, annotations=annotations, labels={"kubernetes.io/os": "linux"}, capacity=True
    )


def make_pod(
    namespace: str,
    name: str,
    node: str = "",
    cpu_limit: str = "1",
    memory_limit: str = "1Gi",
    phase: str = "Running",
    uid: str | None = None,
) -> dict[str, Any]:
    """A ReplicaSet's pod with the fields a real one carries (env, tolerations, conditions)."""
    main = container(
        "main",
        limits={"cpu": cpu_limit, "memory": memory_limit},
        requests={"cpu": "100m", "memory": "128Mi"},
        image="registry.example/app:1.0",
        env=[{"name": "MODE", "value": "production"}],
    )
    built = pod(
        name,
        namespace=namespace,
        containers=[main],
        phase=phase,
        uid=uid,
        labels={"app": name.rsplit("-", 1)[0]},
        owner_kind="ReplicaSet",
        owner_name="rs",
        owner_uid="rs-uid",
        status={"podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]},
        tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
    )
    built["spec"]["nodeName"] = node  # present even when empty, as the apiserver serves a pending pod
    return built


make_namespace = namespace


# -- AdmissionReviews -----------------------------------------------------------------------------
def review(request: dict[str, Any], api_version: str = "admission.k8s.io/v1") -> dict[str, Any]:
    """Wrap a bare AdmissionRequest into an AdmissionReview."""
    return {"apiVersion": api_version, "kind": "AdmissionReview", "request": copy.deepcopy(request)}


def pod_create(pod_object: dict[str, Any], *, uid: str = "req-1", dry_run: bool = False) -> dict[str, Any]:
    metadata = pod_object.get("metadata", {})
    return review(
        {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": metadata.get("namespace", "default"),
            "name": metadata.get("name", ""),
            "operation": "CREATE",
            "object": pod_object,
            "oldObject": None,
            "dryRun": dry_run,
        }
    )


def binding(
    pod_name: str,
    node_name: str,
    *,
    namespace: str = "default",
    uid: str = "req-b",
    pod_uid: str | None = None,
    dry_run: bool = False,
    legacy: bool = False,
) -> dict[str, Any]:
    """The scheduler's bind as the apiserver reviews it: pods/binding, or the legacy bindings resource."""
    metadata = {"name": pod_name, "namespace": namespace}
    if pod_uid:
        metadata["uid"] = pod_uid
    request = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "Binding"},
        "resource": {"group": "", "version": "v1", "resource": "bindings" if legacy else "pods"},
        "namespace": namespace,
        "name": pod_name,
        "operation": "CREATE",
        "object": {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": metadata,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        },
        "oldObject": None,
        "dryRun": dry_run,
    }
    if not legacy:
        request["subResource"] = "binding"
    return review(request)


def resize(old_pod: dict[str, Any], new_pod: dict[str, Any], *, uid: str = "req-r") -> dict[str, Any]:
    metadata = new_pod["metadata"]
    return review(
        {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "subResource": "resize",
            "namespace": metadata["namespace"],
            "name": metadata["name"],
            "operation": "UPDATE",
            "object": new_pod,
            "oldObject": old_pod,
            "dryRun": False,
        }
    )


def node_write(
    node_object: dict[str, Any], old: dict[str, Any] | None = None, *, uid: str = "req-n"
) -> dict[str, Any]:
    return review(
        {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Node"},
            "resource": {"group": "", "version": "v1", "resource": "nodes"},
            "name": node_object["metadata"]["name"],
            "operation": "UPDATE" if old is not None else "CREATE",
            "object": node_object,
            "oldObject": old,
            "dryRun": False,
        }
    )
