"""Sending the pods of opted-in namespaces to limitguard's own scheduler (the chart's second
kube-scheduler, which calls limitguard's extender and so places pods where their limits fit).

A namespace opts in with the label `limitguard.io/use-scheduler: enabled`. Only pods that would go to
`default-scheduler` are changed: a pod that names any other scheduler chose it, and a pod with
`spec.nodeName` bypasses scheduling. An empty or missing `schedulerName` is `default-scheduler`: the
apiserver's defaulting (kubernetes/kubernetes `pkg/apis/core/v1/defaults.go`, SetDefaults_PodSpec)
sets it before admission, so real pods always arrive with the name.

Node agents stay with the cluster's scheduler: a DaemonSet pod (the DaemonSet controller sets a
required node affinity on one node for each of its pods, so there is nothing to place) and a mirror
pod (the kubelet runs the static pod whatever the API says) would only wait for limitguard's
scheduler, which is not ignorable, whenever limitguard is down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limitguard.core.config import DEFAULT_SCHEDULER
from limitguard.core.defaults import MIRROR_ANNOTATION
from limitguard.core.objects import is_object, object_or_empty
from limitguard.core.response import Response, patched

# The label is not `limitguard.io/scheduler`: that is the ConfigMap annotation naming the scheduler a
# KubeSchedulerConfiguration is validated for.
USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE = "limitguard.io/use-scheduler", "enabled"
SCHEDULER_SET = "scheduler-set"


def uses_scheduler(labels: Mapping[str, Any]) -> bool:
    """The namespace asked for limitguard's scheduler (exact value, as the webhook's selector matches)."""
    return labels.get(USE_SCHEDULER_LABEL) == USE_SCHEDULER_VALUE


def scheduler_operation(pod: Any, scheduler_name: str, daemonset: bool = False) -> dict[str, Any] | None:
    """The JSONPatch operation that gives *pod* *scheduler_name* instead of `default-scheduler`, or
    None when the pod names another scheduler, is already bound, is a node agent (*daemonset*: its
    controller is a DaemonSet kind, as the caller reads it; or a mirror pod), or is not a pod at all."""
    spec = pod.get("spec") if is_object(pod) else None
    if not scheduler_name or not is_object(spec) or spec.get("nodeName") or daemonset:
        return None
    if MIRROR_ANNOTATION in object_or_empty(object_or_empty(pod.get("metadata")).get("annotations")):
        return None
    if (spec.get("schedulerName") or DEFAULT_SCHEDULER) != DEFAULT_SCHEDULER:
        return None
    # "add" on an existing member replaces it (RFC 6902 section 4.1), and creates a missing one.
    return {"op": "add", "path": "/spec/schedulerName", "value": scheduler_name}


def with_operation(answer: Response, operation: Mapping[str, Any]) -> Response:
    """*answer* with *operation* appended to its patch (or as its only one), warnings kept. The reason
    keeps the first answer's when it already patched (`defaulted+scheduler-set`)."""
    if answer.patch is None:
        return patched(SCHEDULER_SET, [operation], *answer.warnings)
    return patched(
        f"{answer.reason}+{SCHEDULER_SET}", [*answer.patch.operations(), operation], *answer.warnings
    )
