"""The args kinds and plugins of the scheduler-plugins scheduler (kubernetes-sigs/scheduler-plugins).

Read at tag v0.34.7 (built on Kubernetes 1.34): the kinds apis/config/v1/register.go adds to
kube-scheduler's scheme, the plugins cmd/scheduler/main.go registers, and the extension points each
plugin's type implements. CapacityScheduling, PodState and QOSSort have no args kind: args given to them
are never decoded and the plugins ignore them. v0.35.4-devel has the same kinds and plugins.

The master branch (commit 903da7df, August 2026, built on Kubernetes 1.35) is in no release yet; it adds
the NodeMetadata plugin and kind and NodeResourceTopologyMatch's preemptionMode (and PreFilter point):
``UNRELEASED_KINDS`` and ``UNRELEASED_PLUGINS`` describe it.
"""

from __future__ import annotations

from ..kind import ArgsKind
from . import (
    allocatable,
    coscheduling,
    loadvariation,
    lowrisk,
    networkoverhead,
    nodemetadata,
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

UNRELEASED = "master@903da7df"
UNRELEASED_KUBERNETES_MINOR = 35
UNRELEASED_KINDS: tuple[ArgsKind, ...] = (
    *(topologymatch.UNRELEASED_ARGS if entry is topologymatch.ARGS else entry for entry in KINDS),
    nodemetadata.ARGS,
)
UNRELEASED_PLUGINS: dict[str, frozenset[str]] = PLUGINS | {
    "NodeResourceTopologyMatch": PLUGINS["NodeResourceTopologyMatch"] | {"preFilter"},
    "NodeMetadata": frozenset({"score"}),
}

__all__ = [
    "KINDS",
    "KUBERNETES_MINOR",
    "PLUGINS",
    "RELEASE",
    "UNRELEASED",
    "UNRELEASED_KINDS",
    "UNRELEASED_KUBERNETES_MINOR",
    "UNRELEASED_PLUGINS",
]
