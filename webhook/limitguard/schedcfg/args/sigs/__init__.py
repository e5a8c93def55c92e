"""The builds of the scheduler-plugins scheduler (kubernetes-sigs/scheduler-plugins), per build.

Read at each build's commit: the kinds apis/config/v1/register.go adds to kube-scheduler's scheme and the
fields of apis/config/v1/types.go, the plugins cmd/scheduler/main.go registers, the extension points each
plugin's type implements, and go.mod's k8s.io/kubernetes. CapacityScheduling, PodState and QOSSort have no
args kind: args given to them are never decoded and the plugins ignore them.

Releases are the ``vX.Y.Z`` tags without a suffix. The project also tags ``-devel``, ``-rc`` and other
suffixed builds from its branches, and args change inside a minor line: CoschedulingArgs'
podGroupRejectPercentage first appears in v0.34.4-rc (v0.34.4-devel lacks it). v0.35.4-devel has
v0.34.7's kinds and plugins. ``main`` is the development branch (named master upstream).
"""

from __future__ import annotations

from ...tables.builds import Build, fields_missing, replaced
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

# ------------------------------------------------------------------------------------------ v0.33.5
V0_33_5 = Build(
    "v0.33.5",
    33,  # go.mod: k8s.io/kubernetes v1.33.5
    "c595039ebc2ed180388b89063c6cb05bc6d03562",
    "2025-10-27",
    kinds=(
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
    ),
    plugins={
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
    },
)

# ------------------------------------------------------------------------------------------ v0.34.7
V0_34_7 = V0_33_5.then(
    "v0.34.7",
    34,  # go.mod: k8s.io/kubernetes v1.34.7
    "8283b1452a3acd547ebbbc5ca9c7355aef46d04d",
    "2026-04-20",
    fields_added={"CoschedulingArgs": {"podGroupRejectPercentage": "v0.34.4-rc"}},
)

# --------------------------------------------------------------------------------------------- main
MAIN = V0_34_7.then(
    "main",
    35,  # go.mod: k8s.io/kubernetes v1.35.7
    "903da7df82cb8794dda8f2d510ba1156111662dd",
    "2026-08-16",
    kinds=replaced(V0_34_7.kinds, topologymatch.UNRELEASED_ARGS, nodemetadata.ARGS),
    plugins={
        **V0_34_7.plugins,
        "NodeResourceTopologyMatch": V0_34_7.plugins["NodeResourceTopologyMatch"] | {"preFilter"},
        "NodeMetadata": frozenset({"score"}),
    },
    fields_added={"NodeResourceTopologyMatchArgs": {"preemptionMode": "main"}},
    tagged=False,
)

#: Oldest first; the newest release is the default build.
BUILDS: tuple[Build, ...] = (V0_33_5, V0_34_7, MAIN)
NEWEST_BUILD = V0_34_7

#: The kinds of the newest release and of the development branch, for their schemas and tests.
KINDS: tuple[ArgsKind, ...] = V0_34_7.kinds
UNRELEASED_KINDS: tuple[ArgsKind, ...] = MAIN.kinds


def missing_fields(build: Build) -> dict[str, dict[str, str]]:
    """The fields builds after ``build`` added: its decoder refuses them."""
    return fields_missing(BUILDS, build)


__all__ = [
    "BUILDS",
    "KINDS",
    "MAIN",
    "NEWEST_BUILD",
    "UNRELEASED_KINDS",
    "V0_33_5",
    "V0_34_7",
    "missing_fields",
]
