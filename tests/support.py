"""Builders for Kubernetes objects and AdmissionReviews used across the suite."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

# The one bound on waiting in tests outside tests/live: it only ends a stuck run, so it is far longer
# than anything takes on a loaded single core, and never decides a verdict. Test servers use it as
# their body timeout too, so a starved event loop cannot turn a good request into a 408.
HANG_GUARD_SECONDS = 120.0

# Ledger TTL for test states whose verdicts are not about expiry: an approved binding is then held
# until the cache shows the pod, however long the test takes. Expiry itself is tested with an
# injected clock (tests/cluster/test_state.py).
LEDGER_NEVER_EXPIRES = math.inf


def fixture(name: str) -> Any:
    """A file from tests/fixtures (JSON or YAML), parsed."""
    text = (FIXTURES / name).read_text()
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


def node(
    name: str,
    cpu: str = "8",
    memory: str = "32Gi",
    *,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            "annotations": annotations or {},
        },
        "spec": spec,
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}},
    }


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
    **spec_fields: Any,
) -> dict[str, Any]:
    if containers is None:
        limits = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        containers = [container(limits=limits or None)]
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if owner_kind:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner_kind,
                "name": "owner",
                "uid": "o",
                "controller": owner_controller,
            }
        ]
    spec: dict[str, Any] = {"containers": containers, **spec_fields}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": {"phase": phase}}


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
