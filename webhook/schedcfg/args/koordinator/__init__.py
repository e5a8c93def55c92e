"""The args kinds and plugins of koord-scheduler (Koordinator).

Read at tag v1.8.0 (go.mod: k8s.io/kubernetes v1.35.2): the kinds pkg/scheduler/apis/config/v1/register.go
adds to kube-scheduler's v1 scheme, the plugins cmd/koord-scheduler/main.go registers, and the
extension points each plugin's type implements. Its registry merges with the in-tree one, so it replaces
no in-tree plugin (a name in both would stop the start). DefaultPreBind has no args kind.

``KINDS`` holds the kinds defined here; koord-scheduler also decodes NodeResourcesFitPlusArgs and
ScarceResourceAvoidanceArgs, whose modules limitguard's extender shares (``REGISTERED_KINDS`` lists all
nine). LimitAware is not registered by v1.8.0 (it exists only in the unmerged Koordinator PR #1486).

Koordinator's main branch after v1.8.0 adds ReservationArgs fields (ignoredResources,
ignoredResourceGroups, reservationSelectorIndex) and the validation tests of PR #3025; v1.8.0 is the
release judged, so those fields are unknown-field errors with a note naming the newer build.
"""

from __future__ import annotations

from ..kind import ArgsKind
from . import coscheduling, deviceshare, elasticquota, loadaware, numa, reservation, schedulinghint
from .common import RELEASE

KUBERNETES_MINOR = 35

KINDS: tuple[ArgsKind, ...] = (
    loadaware.ARGS,
    numa.ARGS,
    reservation.ARGS,
    elasticquota.ARGS,
    coscheduling.ARGS,
    deviceshare.ARGS,
    schedulinghint.ARGS,
)

#: Every args kind koord-scheduler v1.8.0's scheme decodes (register.go addKnownTypes).
REGISTERED_KINDS: frozenset[str] = frozenset(
    {entry.kind for entry in KINDS} | {"NodeResourcesFitPlusArgs", "ScarceResourceAvoidanceArgs"}
)

#: Registered plugin -> the extension points its type implements (KubeSchedulerConfiguration field names).
#: Coscheduling has no queueSort: Koordinator PR #2417 replaced its Less with the NextPod hook.
PLUGINS: dict[str, frozenset[str]] = {
    "LoadAwareScheduling": frozenset({"preFilter", "filter", "score", "reserve"}),
    "NodeNUMAResource": frozenset({"preFilter", "filter", "preScore", "score", "reserve", "preBind"}),
    "Reservation": frozenset(
        {"preFilter", "filter", "postFilter", "preScore", "score", "reserve", "preBind", "bind"}
    ),
    "Coscheduling": frozenset(
        {
            "preEnqueue",
            "preFilter",
            "postFilter",
            "preScore",
            "score",
            "reserve",
            "permit",
            "preBind",
            "postBind",
        }
    ),
    "DeviceShare": frozenset({"preFilter", "filter", "preScore", "score", "reserve", "preBind"}),
    "ElasticQuota": frozenset({"preFilter", "postFilter", "reserve"}),
    "DefaultPreBind": frozenset({"preBind"}),
    "NodeResourcesFitPlus": frozenset({"preScore", "score"}),
    "ScarceResourceAvoidance": frozenset({"preScore", "score"}),
    "SchedulingHint": frozenset({"preFilter"}),
}

__all__ = ["KINDS", "KUBERNETES_MINOR", "PLUGINS", "REGISTERED_KINDS", "RELEASE"]
