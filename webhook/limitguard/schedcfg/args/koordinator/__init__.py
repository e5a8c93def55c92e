"""The builds of koord-scheduler (Koordinator): args kinds, plugins and the Kubernetes minor, per build.

Read from koordinator-sh/koordinator at each build's commit: the kinds
pkg/scheduler/apis/config/v1/register.go adds to kube-scheduler's v1 scheme and the fields of
pkg/scheduler/apis/config/v1/types.go, the plugins cmd/koord-scheduler/main.go registers, the extension
points each plugin's type implements (its methods), and go.mod's k8s.io/kubernetes. Its registry merges
with the in-tree one, so it replaces no in-tree plugin (a name in both would stop the start).
DefaultPreBind has no args kind in any build; SchedulingHint has none before v1.8.0.

koord-scheduler also decodes NodeResourcesFitPlusArgs and ScarceResourceAvoidanceArgs, whose modules
limitguard's extender shares. LimitAware is in no build (only the unmerged Koordinator PR #1486): every
build is judged as one carrying that change, with a note.

Releases are the ``vX.Y.Z`` tags (Koordinator tags no pre-releases of the scheduler); ``main`` is the
development branch at the commit named.
"""

from __future__ import annotations

from ...tables.builds import Build, fields_missing
from ..fitplus import KOORD_ARGS as FITPLUS_ARGS
from ..fitplus import KOORD_LEGACY_ARGS as FITPLUS_LEGACY_ARGS
from ..kind import ArgsKind
from ..limitaware import KOORD_ARGS as LIMITAWARE_ARGS
from ..scarce import KOORD_ARGS as SCARCE_ARGS
from . import coscheduling, deviceshare, elasticquota, loadaware, numa, reservation, schedulinghint

_SCORE = frozenset({"preScore", "score"})

#: The kinds defined in this package that every build registers.
_OWN_KINDS: tuple[ArgsKind, ...] = (
    loadaware.ARGS,
    numa.ARGS,
    reservation.ARGS,
    elasticquota.ARGS,
    coscheduling.ARGS,
    deviceshare.ARGS,
)

# ------------------------------------------------------------------------------------------- v1.7.0
V1_7_0 = Build(
    "v1.7.0",
    28,  # go.mod: k8s.io/kubernetes v1.28.7
    "a47133acb375db0219f602292c753e48ed417a4a",
    "2025-10-23",
    kinds=(
        *_OWN_KINDS,
        FITPLUS_ARGS,
        FITPLUS_LEGACY_ARGS,
        SCARCE_ARGS,
        LIMITAWARE_ARGS,
    ),
    plugins={
        "LoadAwareScheduling": frozenset({"preFilter", "filter", "score", "reserve"}),
        "NodeNUMAResource": frozenset({"preFilter", "filter", "preScore", "score", "reserve", "preBind"}),
        "Reservation": frozenset(
            {"preFilter", "filter", "postFilter", "preScore", "score", "reserve", "preBind", "bind"}
        ),
        # no queueSort: Koordinator PR #2417 replaced its Less with the NextPod hook
        "Coscheduling": frozenset(
            {"preEnqueue", "preFilter", "postFilter", "reserve", "permit", "preBind", "postBind"}
        ),
        "DeviceShare": frozenset({"preFilter", "filter", "preScore", "score", "reserve", "preBind"}),
        "ElasticQuota": frozenset({"preFilter", "postFilter", "reserve"}),
        "DefaultPreBind": frozenset({"preBind"}),
        "NodeResourcesFitPlus": _SCORE,
        "ScarceResourceAvoidance": _SCORE,
        "SchedulingHint": frozenset({"preFilter"}),
        # pkg/scheduler/plugins/limitaware at 9ddd4fb2 (PR #1486)
        "LimitAware": frozenset({"preFilter", "filter", "preScore", "score", "reserve"}),
    },
)

# ------------------------------------------------------------------------------------------- v1.8.0
V1_8_0 = V1_7_0.then(
    "v1.8.0",
    35,  # go.mod: k8s.io/kubernetes v1.35.2
    "989ca85c62abcca92b303aa12fd2ccff2ed30fed",
    "2026-04-16",
    kinds=(*V1_7_0.kinds, schedulinghint.ARGS),
    plugins={**V1_7_0.plugins, "Coscheduling": V1_7_0.plugins["Coscheduling"] | _SCORE},
    fields_added={
        "ReservationArgs": dict.fromkeys(
            ("gcIntervalSeconds", "disableGarbageCollection", "resyncIntervalSeconds", "preAllocationConfig"),
            "v1.8.0",
        ),
        "ElasticQuotaArgs": dict.fromkeys(("enableQueueHint", "quotaSnapshotUpdateInterval"), "v1.8.0"),
        "CoschedulingArgs": {"defaultMatchPolicy": "v1.8.0"},
        "DeviceShareArgs": {"gpuShareUnsupportedModels": "v1.8.0"},
    },
)

# --------------------------------------------------------------------------------------------- main
MAIN = V1_8_0.then(
    "main",
    35,  # go.mod: k8s.io/kubernetes v1.35.6
    "a7a1b76bbf81abd26f9c377de1f31a60dd965f6e",
    "2026-07-24",
    fields_added={
        # PR #3067 (commit 5b02d4ea) and PR #3009 (commit f02ec9cb)
        "ReservationArgs": {
            "ignoredResources": "main",
            "ignoredResourceGroups": "main",
            "reservationSelectorIndex": "main",
        }
    },
    tagged=False,
)

#: Oldest first; the newest release is the default build.
BUILDS: tuple[Build, ...] = (V1_7_0, V1_8_0, MAIN)
NEWEST_BUILD = V1_8_0

#: The kinds defined in this package (as the newest build has them), for their schemas and tests.
KINDS: tuple[ArgsKind, ...] = (*_OWN_KINDS, schedulinghint.ARGS)


def missing_fields(build: Build) -> dict[str, dict[str, str]]:
    """The fields builds after ``build`` added: its decoder refuses them."""
    return fields_missing(BUILDS, build)


__all__ = ["BUILDS", "KINDS", "MAIN", "NEWEST_BUILD", "V1_7_0", "V1_8_0", "missing_fields"]
