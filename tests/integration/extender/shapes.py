"""Real-shaped objects as kube-scheduler sends them: its in-memory Pod and Nodes, JSON-encoded by Go.

kube-scheduler marshals k8s.io/kube-scheduler/extender/v1.ExtenderArgs, whose fields have no JSON
tags: the keys are `Pod`, `Nodes`, `NodeNames`, and the unused one is `null`. The objects carry the
apiserver's defaults (dnsPolicy, tolerations for not-ready/unreachable, terminationMessagePath, ...)
and, for Nodes, the full status kubelet reports.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.support import APISERVER_TOLERATIONS


def scheduler_pod(
    name: str = "pod5",
    *,
    cpu_limit: str = "4",
    memory_limit: str = "1Gi",
    namespace: str = "default",
    owner_kind: str = "ReplicaSet",
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "generateName": "web-7d4b9c8f6d-",
            "namespace": namespace,
            "uid": "6f1c2d7e-3b1a-4c55-9a7e-0d2f5e8b9a10",
            "resourceVersion": "48213",
            "creationTimestamp": "2025-05-14T09:12:33Z",
            "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": owner_kind,
                    "name": "web-7d4b9c8f6d",
                    "uid": "2a9e0c1b-77d4-4f0e-8c3a-5b6d7e8f9a0b",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2025-05-14T09:12:33Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:generateName": {}}},
                }
            ],
        },
        "spec": {
            "volumes": [
                {
                    "name": "kube-api-access-x7k2p",
                    "projected": {
                        "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}],
                        "defaultMode": 420,
                    },
                }
            ],
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.27",
                    "resources": {
                        "limits": {"cpu": cpu_limit, "memory": memory_limit},
                        "requests": {"cpu": "500m", "memory": "256Mi"},
                    },
                    "volumeMounts": [
                        {
                            "name": "kube-api-access-x7k2p",
                            "readOnly": True,
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        }
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [dict(toleration) for toleration in APISERVER_TOLERATIONS],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def scheduler_node(name: str, cpu: str = "8", memory: str = "32Gi") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "47990",
            "creationTimestamp": "2025-05-01T00:00:00Z",
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]},
        "status": {
            "capacity": {
                "cpu": cpu,
                "ephemeral-storage": "102350Mi",
                "hugepages-2Mi": "0",
                "memory": memory,
                "pods": "110",
            },
            "allocatable": {
                "cpu": cpu,
                "ephemeral-storage": "100Gi",
                "hugepages-2Mi": "0",
                "memory": memory,
                "pods": "110",
            },
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2025-05-14T09:10:00Z",
                    "lastTransitionTime": "2025-05-01T00:01:00Z",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": "172.18.0.3"},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "3c1f0e8a",
                "kernelVersion": "6.8.0-31-generic",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.15",
                "kubeletVersion": "v1.31.0",
                "kubeProxyVersion": "v1.31.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}],
        },
    }


def args_names(pod: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """ExtenderArgs of an extender with nodeCacheCapable: true, as Go's encoding/json writes it."""
    return {"Pod": copy.deepcopy(pod), "Nodes": None, "NodeNames": list(names)}


def args_nodes(pod: dict[str, Any], nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """ExtenderArgs of an extender with nodeCacheCapable: false: a v1.NodeList (no TypeMeta)."""
    return {
        "Pod": copy.deepcopy(pod),
        "Nodes": {"metadata": {}, "items": copy.deepcopy(nodes)},
        "NodeNames": None,
    }
