"""In-tree plugins per release: extension points, the plugin registry, the default plugin set.

Facts (never code) from kubernetes/kube-scheduler config/v1/types.go (the ``Plugins`` fields: which
extension points a release's strict decoder knows) and framework/interface.go at v0.35.7, v0.36.3 and
v0.37.0-beta.0; kubernetes pkg/scheduler/framework/plugins/registry.go and each plugin's Go type (which
framework interfaces it implements); v1/default_plugins.go (the multiPoint defaults, their weights and
the gates that add plugins). docs/versions.md lists each change with its release.

``in_tree(release)`` is the one entry point for other scheduler tables built on kube-scheduler's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .releases import Release

#: The v1 ``Plugins`` fields of every supported release, in types.go order.
BASE_POINTS: tuple[str, ...] = (
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
#: Extension point -> first minor whose v1 ``Plugins`` has the field (kube-scheduler config/v1/types.go).
POINT_SINCE: dict[str, int] = {"placementGenerate": 36, "placementScore": 36, "podGroupPostFilter": 37}
#: Every extension point some supported release has (besides multiPoint).
POINTS: tuple[str, ...] = BASE_POINTS + tuple(POINT_SINCE)
#: Points where a plugin's weight is used (types.go: "only used for Score and PlacementScore plugins").
WEIGHTED_POINTS: frozenset[str] = frozenset({"score", "placementScore"})
#: Points whose in-tree implementers limitguard has not confirmed: a mismatch there is only a warning.
UNCONFIRMED_POINTS: frozenset[str] = frozenset({"podGroupPostFilter"})


def extension_points(release: Release) -> tuple[str, ...]:
    """The extension points (``plugins.<point>``) kube-scheduler ``release`` decodes."""
    return tuple(p for p in POINTS if release.minor >= POINT_SINCE.get(p, 0))


_FILTER = frozenset({"preFilter", "filter"})
_SCORED_FILTER = frozenset({"preFilter", "filter", "preScore", "score"})


@dataclass(frozen=True)
class InTreePlugin:
    """One registry entry: the points it implements from a minor on (later steps add points)."""

    points: tuple[tuple[int, frozenset[str]], ...] | None  # None: exists, points not modelled
    since: int = 0
    until: int | None = None  # first minor without it

    def points_in(self, minor: int) -> frozenset[str] | None:
        if self.points is None:
            return None
        return frozenset().union(*(added for first, added in self.points if minor >= first))


def _plugin(
    points: frozenset[str], *later: tuple[int, frozenset[str]], since: int = 0, until: int | None = None
):
    return InTreePlugin(((0, points), *later), since, until)


_IN_TREE: dict[str, InTreePlugin] = {
    "PrioritySort": _plugin(frozenset({"queueSort"})),
    "SchedulingGates": _plugin(frozenset({"preEnqueue"})),
    "NodeUnschedulable": _plugin(frozenset({"filter"})),
    "NodeName": _plugin(frozenset({"filter"})),
    "TaintToleration": _plugin(frozenset({"filter", "preScore", "score"})),
    "NodeAffinity": _plugin(_SCORED_FILTER),
    "NodePorts": _plugin(_FILTER),
    # PlacementScore from 1.36 (noderesources/fit.go)
    "NodeResourcesFit": _plugin(_SCORED_FILTER, (36, frozenset({"placementScore"}))),
    "NodeResourcesBalancedAllocation": _plugin(frozenset({"preScore", "score"})),
    "VolumeRestrictions": _plugin(_FILTER),
    "NodeVolumeLimits": _plugin(_FILTER),
    "EBSLimits": _plugin(_FILTER, until=32),
    "GCEPDLimits": _plugin(_FILTER, until=32),
    "AzureDiskLimits": _plugin(_FILTER, until=32),
    "CinderLimits": _plugin(_FILTER, until=32),
    "VolumeBinding": _plugin(frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"})),
    "VolumeZone": _plugin(_FILTER),
    "PodTopologySpread": _plugin(_SCORED_FILTER),
    "InterPodAffinity": _plugin(_SCORED_FILTER),
    "DefaultPreemption": _plugin(frozenset({"preEnqueue", "postFilter"})),
    "ImageLocality": _plugin(frozenset({"score"})),
    "DefaultBinder": _plugin(frozenset({"bind"})),
    # Score from 1.35 (kubernetes PR #134711, dynamicresources.go)
    "DynamicResources": _plugin(
        frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}),
        (35, frozenset({"score"})),
    ),
    "GangScheduling": InTreePlugin(None, since=35),
    "NodeDeclaredFeatures": _plugin(_FILTER, since=35),
    "TopologyPlacementGenerator": _plugin(frozenset({"placementGenerate"}), since=36),
    "PodGroupPodsCount": _plugin(frozenset({"placementScore"}), since=36),
}


@dataclass(frozen=True)
class DefaultPlugin:
    """One multiPoint default of default_plugins.go, with the releases and the gate that add it."""

    name: str
    weight: int | None = None
    since: int = 0
    until: int | None = None
    gate: str | None = None


#: getDefaultPlugins in order, applyFeatureGates' additions included (DynamicResources goes before
#: DefaultPreemption, as upstream inserts it; where NodeDeclaredFeatures goes changes no rule here).
_DEFAULTS: tuple[DefaultPlugin, ...] = (
    DefaultPlugin("SchedulingGates"),
    DefaultPlugin("PrioritySort"),
    DefaultPlugin("NodeUnschedulable"),
    DefaultPlugin("NodeName"),
    DefaultPlugin("TaintToleration", 3),
    DefaultPlugin("NodeAffinity", 2),
    DefaultPlugin("NodePorts"),
    DefaultPlugin("NodeResourcesFit", 1),
    DefaultPlugin("VolumeRestrictions"),
    DefaultPlugin("EBSLimits", until=32),
    DefaultPlugin("GCEPDLimits", until=32),
    DefaultPlugin("NodeVolumeLimits"),
    DefaultPlugin("AzureDiskLimits", until=32),
    DefaultPlugin("VolumeBinding"),
    DefaultPlugin("VolumeZone"),
    DefaultPlugin("PodTopologySpread", 2),
    DefaultPlugin("InterPodAffinity", 2),
    DefaultPlugin("DynamicResources", gate="DynamicResourceAllocation"),
    DefaultPlugin("DefaultPreemption"),
    DefaultPlugin("NodeResourcesBalancedAllocation", 1),
    DefaultPlugin("ImageLocality", 1),
    DefaultPlugin("DefaultBinder"),
    DefaultPlugin("GangScheduling", since=35, until=37, gate="GangScheduling"),
    DefaultPlugin("TopologyPlacementGenerator", since=36, gate="TopologyAwareWorkloadScheduling"),
    DefaultPlugin("PodGroupPodsCount", 1, since=36, gate="TopologyAwareWorkloadScheduling"),
    DefaultPlugin("NodeDeclaredFeatures", since=35, gate="NodeDeclaredFeatures"),
)

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
    """Plugin name -> extension points it implements in ``release`` (None: exists, points not modelled)."""
    return {
        name: plugin.points_in(release.minor)
        for name, plugin in _IN_TREE.items()
        if release.minor >= plugin.since and (plugin.until is None or release.minor < plugin.until)
    }


def removal_hint(name: str, release: Release) -> str | None:
    """Why ``name`` is not a plugin of ``release`` when it used to be one; None otherwise."""
    if name in REMOVED_PLUGINS:
        return REMOVED_PLUGINS[name]
    plugin = _IN_TREE.get(name)
    if plugin and plugin.until is not None and release.minor >= plugin.until:
        return f"removed in Kubernetes 1.{plugin.until}: {_VOLUME_LIMIT_HINT}"
    return None


def added_in(name: str) -> int | None:
    """The minor that registered in-tree plugin ``name``, when it is newer than every supported one."""
    plugin = _IN_TREE.get(name)
    return plugin.since if plugin and plugin.since else None


def invalid_in_v1(name: str, release: Release) -> bool:
    since = INVALID_IN_V1_SINCE.get(name)
    return since is not None and release.minor >= since


def default_plugins(release: Release) -> list[dict[str, object]]:
    """The multiPoint ``enabled`` list of default_plugins.go for ``release`` (feature gates applied)."""
    return [
        {"name": d.name, **({"weight": d.weight} if d.weight is not None else {})}
        for d in _DEFAULTS
        if release.minor >= d.since
        and (d.until is None or release.minor < d.until)
        and (d.gate is None or release.enabled(d.gate))
    ]


@dataclass(frozen=True)
class InTree:
    """Everything kube-scheduler ``release`` registers: points, plugins with their points, defaults."""

    release: Release
    extension_points: tuple[str, ...]
    plugins: dict[str, frozenset[str] | None]
    default_plugins: list[dict[str, object]]


def in_tree(release: Release) -> InTree:
    """The in-tree tables of ``release`` (feature gates applied), for schedulers built on kube-scheduler."""
    return InTree(release, extension_points(release), in_tree_plugins(release), default_plugins(release))
