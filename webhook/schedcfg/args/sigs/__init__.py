"""The args kinds and plugins of the scheduler-plugins scheduler (kubernetes-sigs/scheduler-plugins).

Read at tag v0.34.7 (built on Kubernetes 1.34): the kinds apis/config/v1/register.go adds to
kube-scheduler's scheme, the plugins cmd/scheduler/main.go registers, and the extension points each
plugin's type implements. CapacityScheduling, PodState and QOSSort have no args kind: args given to them
are never decoded and the plugins ignore them. NodeMetadata exists only after v0.34 (master), not here.
"""

from __future__ import annotations

from ..kind import ArgsKind
from . import (
    allocatable,
    coscheduling,
    loadvariation,
    lowrisk,
    networkoverhead,
    peaks,
    preemptiontoleration,
    sysched,
    targetloadpacking,
    topologicalsort,
    topologymatch,
)

RELEASE = "v0.34.x"
KUBERNETES_MINOR = 34

KINDS: tuple[ArgsKind, ...] = (
    coscheduling.ARGS,
    allocatable.ARGS,
    topologymatch.ARGS,
    targetloadpacking.ARGS,
    loadvariation.ARGS,
    lowrisk.ARGS,
    peaks.ARGS,
    sysched.ARGS,
    networkoverhead.ARGS,
    topologicalsort.ARGS,
    preemptiontoleration.ARGS,
)

#: Registered plugin -> the extension points its type implements (KubeSchedulerConfiguration field names).
PLUGINS: dict[str, frozenset[str]] = {
    "CapacityScheduling": frozenset({"preFilter", "postFilter", "reserve"}),
    "Coscheduling": frozenset({"queueSort", "preFilter", "postFilter", "permit", "reserve"}),
    "LoadVariationRiskBalancing": frozenset({"score"}),
    "NetworkOverhead": frozenset({"preFilter", "filter", "score"}),
    "TopologicalSort": frozenset({"queueSort"}),
    "NodeResourcesAllocatable": frozenset({"score"}),
    "NodeResourceTopologyMatch": frozenset({"filter", "reserve", "score", "postBind"}),
    "PreemptionToleration": frozenset({"postFilter"}),
    "TargetLoadPacking": frozenset({"score"}),
    "LowRiskOverCommitment": frozenset({"preScore", "score"}),
    "SySched": frozenset({"score"}),
    "Peaks": frozenset({"score"}),
    "PodState": frozenset({"score"}),
    "QOSSort": frozenset({"queueSort"}),
}

__all__ = ["KINDS", "KUBERNETES_MINOR", "PLUGINS", "RELEASE"]
