"""In-tree plugins per release: their extension points, the default plugin set, removed names.

Facts from kube-scheduler's registry.go (which plugins exist), each plugin's Go type (which framework
interfaces it implements) and default_plugins.go (the multiPoint defaults and their score weights).
"""

from __future__ import annotations

from .releases import Release

POINTS: tuple[str, ...] = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

_FILTER = frozenset({"preFilter", "filter"})
_SCORED_FILTER = frozenset({"preFilter", "filter", "preScore", "score"})
_VOLUME_LIMITS = frozenset({"preFilter", "filter"})

#: Plugin -> (extension points, first minor, first minor without it). None points: not modelled.
_IN_TREE: dict[str, tuple[frozenset[str] | None, int, int | None]] = {
    "PrioritySort": (frozenset({"queueSort"}), 0, None),
    "SchedulingGates": (frozenset({"preEnqueue"}), 0, None),
    "NodeUnschedulable": (frozenset({"filter"}), 0, None),
    "NodeName": (frozenset({"filter"}), 0, None),
    "TaintToleration": (frozenset({"filter", "preScore", "score"}), 0, None),
    "NodeAffinity": (_SCORED_FILTER, 0, None),
    "NodePorts": (_FILTER, 0, None),
    "NodeResourcesFit": (_SCORED_FILTER, 0, None),
    "NodeResourcesBalancedAllocation": (frozenset({"preScore", "score"}), 0, None),
    "VolumeRestrictions": (_FILTER, 0, None),
    "NodeVolumeLimits": (_VOLUME_LIMITS, 0, None),
    "EBSLimits": (_VOLUME_LIMITS, 0, 32),
    "GCEPDLimits": (_VOLUME_LIMITS, 0, 32),
    "AzureDiskLimits": (_VOLUME_LIMITS, 0, 32),
    "CinderLimits": (_VOLUME_LIMITS, 0, 32),
    "VolumeBinding": (
        frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
        0,
        None,
    ),
    "VolumeZone": (_FILTER, 0, None),
    "PodTopologySpread": (_SCORED_FILTER, 0, None),
    "InterPodAffinity": (_SCORED_FILTER, 0, None),
    "DefaultPreemption": (frozenset({"preEnqueue", "postFilter"}), 0, None),
    "ImageLocality": (frozenset({"score"}), 0, None),
    "DefaultBinder": (frozenset({"bind"}), 0, None),
    "DynamicResources": (
        frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}),
        0,
        None,
    ),
    "GangScheduling": (None, 35, None),
}

#: Names kube-scheduler no longer has at all (any supported release), with what to use instead.
REMOVED_PLUGINS: dict[str, str] = {
    "NodeResourcesLeastAllocated": "use NodeResourcesFit with scoringStrategy.type LeastAllocated",
    "NodeResourcesMostAllocated": "use NodeResourcesFit with scoringStrategy.type MostAllocated",
    "RequestedToCapacityRatio": "use NodeResourcesFit with scoringStrategy.type RequestedToCapacityRatio",
    "NodeLabel": "use NodeAffinity",
    "ServiceAffinity": "use InterPodAffinity",
    "NodePreferAvoidPods": "use node taints",
    "SelectorSpread": "use PodTopologySpread",
}
_VOLUME_LIMIT_HINT = "use NodeVolumeLimits (CSI drivers report their limits)"

#: validation.go's invalidPluginsByVersion for v1 (from 1.32, when the in-tree volume limits went away).
INVALID_IN_V1_SINCE: dict[str, int] = {
    "AzureDiskLimits": 32,
    "CinderLimits": 32,
    "EBSLimits": 32,
    "GCEPDLimits": 32,
}

#: Out-of-tree plugins known to implement QueueSort (enabling them through multiPoint adds a queue sort).
OUT_OF_TREE_QUEUE_SORT = frozenset({"Coscheduling", "QOSSort"})


def in_tree_plugins(release: Release) -> dict[str, frozenset[str] | None]:
    """Plugin name -> extension points it implements (None: exists, points not modelled)."""
    return {
        name: points
        for name, (points, since, until) in _IN_TREE.items()
        if release.minor >= since and (until is None or release.minor < until)
    }


def removal_hint(name: str, release: Release) -> str | None:
    """Why ``name`` is not a plugin of ``release`` when it used to be one; None otherwise."""
    if name in REMOVED_PLUGINS:
        return REMOVED_PLUGINS[name]
    entry = _IN_TREE.get(name)
    if entry and entry[2] is not None and release.minor >= entry[2]:
        return f"removed in Kubernetes 1.{entry[2]}: {_VOLUME_LIMIT_HINT}"
    return None


def invalid_in_v1(name: str, release: Release) -> bool:
    since = INVALID_IN_V1_SINCE.get(name)
    return since is not None and release.minor >= since


def default_plugins(release: Release) -> list[dict[str, object]]:
    """The multiPoint ``enabled`` list of default_plugins.go for ``release`` (feature gates applied)."""
    names: list[tuple[str, int | None]] = [
        ("SchedulingGates", None),
        ("PrioritySort", None),
        ("NodeUnschedulable", None),
        ("NodeName", None),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", None),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", None),
    ]
    if release.minor < 32:
        names += [
            ("EBSLimits", None),
            ("GCEPDLimits", None),
            ("NodeVolumeLimits", None),
            ("AzureDiskLimits", None),
        ]
    else:
        names.append(("NodeVolumeLimits", None))
    names += [
        ("VolumeBinding", None),
        ("VolumeZone", None),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
    ]
    if release.enabled("DynamicResourceAllocation"):
        names.append(("DynamicResources", None))  # before DefaultPreemption, as upstream inserts it
    names += [
        ("DefaultPreemption", None),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", None),
    ]
    if release.enabled("GangScheduling"):
        names.append(("GangScheduling", None))
    return [{"name": n, **({"weight": w} if w is not None else {})} for n, w in names]
