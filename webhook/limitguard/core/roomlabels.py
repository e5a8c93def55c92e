"""Limit room as node labels, and the taint on nodes nearly full by limits: what to write.

The leader keeps, on every node, one label per ratio'd resource saying how much limit room the node
has left (capacity less counted limits and held bindings), rounded down; placement hints prefer, with
one `Gt` requirement per resource, the nodes whose label says the pod fits. Everything here is a plain
function: the value of a label, the `Gt` value for a pod's limit, whether the taint is wanted (with
hysteresis), and the patches that say it.

Two rules of kube-scheduler shape the values (k8s.io/apimachinery `pkg/labels/selector.go`
NewRequirement, k8s.io/component-helpers `scheduling/corev1/nodeaffinity/nodeaffinity.go`):

- `Gt` takes exactly one value, parsed as an int64, and compares strictly; a node without the label
  never matches. So a node that does not check a resource (which every pod fits) carries the int64
  maximum, and a pod whose limit would need a value past it gets no hint at all.
- A label value is at most 63 characters of `[A-Za-z0-9._-]`: never negative. A node over its ratio
  says 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LABEL_PREFIX = "limitguard.io/"
ROOM_LABEL_NAME = "limit-room-"
ROOM_LABEL_PREFIX = LABEL_PREFIX + ROOM_LABEL_NAME
FULL_TAINT_KEY = "limitguard.io/limit-full"
FULL_TAINT_EFFECT = "PreferNoSchedule"
FULL_TAINT = {"key": FULL_TAINT_KEY, "effect": FULL_TAINT_EFFECT}
INT64_MAX = 2**63 - 1
# A label's name part (after the prefix) is at most 63 characters (apimachinery IsQualifiedName).
MAX_NAME_PART = 63
MEBIBYTE = 1 << 20
# Resources counted in bytes: their room is labelled in MiB. cpu is counted (and labelled) in
# millicores; every other resource in whole units, as limitguard counts it (core.quantity).
_BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage", "storage"})


def label_unit(resource: str) -> int:
    """How many of limitguard's units (millicores, bytes, whole units) one unit of the label is."""
    if resource in _BYTE_RESOURCES or resource.startswith("hugepages-"):
        return MEBIBYTE
    return 1


def unit_name(resource: str) -> str:
    if resource == "cpu":
        return "millicores"
    return "MiB" if label_unit(resource) == MEBIBYTE else "units"


def room_label_key(resource: str) -> str | None:
    """`limitguard.io/limit-room-<resource>`, the resource's `/` written `_` (no standard resource
    name and no DNS prefix has a `_`, so no two resources share a key); None when the name part
    would pass 63 characters (that resource is not labelled)."""
    name = ROOM_LABEL_NAME + resource.replace("/", "_")
    return LABEL_PREFIX + name if len(name) <= MAX_NAME_PART else None


def is_room_label(key: str) -> bool:
    return key.startswith(ROOM_LABEL_PREFIX)


def resource_of_label(key: str) -> str | None:
    """The resource a room label is about (room_label_key's inverse); None for any other key."""
    if not is_room_label(key):
        return None
    return key[len(ROOM_LABEL_PREFIX) :].replace("_", "/", 1)


def label_value(room: int | None, resource: str) -> str:
    """The label of a node with *room* left (None: the node does not check the resource, so any
    limit fits it): rounded down to the label's unit, 0 for a node over its ratio."""
    if room is None:
        return str(INT64_MAX)
    return str(min(max(room, 0) // label_unit(resource), INT64_MAX))


def gt_value(limit: int, resource: str) -> int | None:
    """The `Gt` value that matches exactly the labels of nodes with room for *limit*.

    With label = floor(room / unit), `label > (limit - 1) // unit` means `label >= ceil(limit /
    unit)`, so room >= limit: a node with exactly the pod's limit left in whole units (2 cpu of
    room, a 2 cpu limit) matches, and a node matching always has room (a limit that is not a whole
    unit asks up to one unit more). None when the limit needs no requirement (0) or when no value
    would parse and still match the nodes that do not check the resource (past the int64 maximum).
    """
    if limit <= 0:
        return None
    value = (limit - 1) // label_unit(resource)
    return value if value < INT64_MAX else None


@dataclass(frozen=True, slots=True)
class NodeRoom:
    """One resource of one node: its limit capacity and the room left (None: not checked)."""

    room: int | None
    capacity: int


def desired_labels(rooms: Mapping[str, NodeRoom]) -> dict[str, str]:
    """The room labels a node should carry, by key (resources whose key would be too long skipped)."""
    labels = {}
    for resource, found in rooms.items():
        key = room_label_key(resource)
        if key is not None:
            labels[key] = label_value(found.room, resource)
    return labels


def own_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The room labels among a node's labels."""
    return {key: value for key, value in labels.items() if is_room_label(key)}


def label_patch(current: Mapping[str, str], desired: Mapping[str, str]) -> dict[str, Any] | None:
    """A JSON merge patch (RFC 7386) from the node's room labels *current* to *desired*: changed and
    new keys set, keys no longer meant removed (null); None when nothing differs. Labels are a map,
    so the patch touches no other key and needs no precondition."""
    changes: dict[str, str | None] = {
        key: value for key, value in desired.items() if current.get(key) != value
    }
    changes.update({key: None for key in current if key not in desired})
    return {"metadata": {"labels": changes}} if changes else None


def lowers_room(current: Mapping[str, str], desired: Mapping[str, str]) -> bool:
    """Does writing *desired* make the node say less room than it does now? The stale higher value
    is what sends pods to a node without room, so such a write goes first."""
    for key, value in desired.items():
        before = current.get(key)
        if before is not None and _as_int(value) < _as_int(before):
            return True
    return False


def _as_int(value: str) -> int:
    return int(value) if value.isdigit() else INT64_MAX


@dataclass(frozen=True, slots=True)
class FullThreshold:
    """`placementHints.avoidFullNodes`: tainted below *below* percent of limit capacity left on any
    resource, untainted again only at *below + hysteresis* percent on every one."""

    below: int
    hysteresis: int


def _under(found: NodeRoom, percent: int) -> bool:
    """Is the room under *percent* of the capacity? A resource the node does not check, or checks
    with no capacity (a resource it does not have), never makes it full: a pod limiting that
    resource is kept off it by the label."""
    if found.room is None or found.capacity <= 0:
        return False
    return found.room * 100 < percent * found.capacity


def wants_full_taint(tainted: bool, rooms: Iterable[NodeRoom], threshold: FullThreshold) -> bool:
    """Whether the node should carry the taint, given whether it does now (hysteresis: a node near
    the threshold does not flap as single pods come and go)."""
    if tainted:
        return any(_under(found, threshold.below + threshold.hysteresis) for found in rooms)
    return any(_under(found, threshold.below) for found in rooms)


def has_full_taint(taints: Sequence[Any]) -> bool:
    return any(_is_full_taint(taint) for taint in taints)


def _is_full_taint(taint: Any) -> bool:
    key = taint.get("key") if isinstance(taint, Mapping) else getattr(taint, "key", None)
    return key == FULL_TAINT_KEY


def taints_with(taints: Sequence[Mapping[str, Any]], wanted: bool) -> list[Mapping[str, Any]] | None:
    """The node's whole `spec.taints` with limitguard's taint present (once, as limitguard writes
    it) or absent, every other taint kept as it is; None when that is the list already.
    (`spec.taints` has no merge key, so a patch replaces the whole list: written with a
    resourceVersion precondition.)"""
    ours = [taint for taint in taints if _is_full_taint(taint)]
    others = [taint for taint in taints if not _is_full_taint(taint)]
    if wanted:
        if len(ours) == 1 and ours[0].get("effect") == FULL_TAINT_EFFECT and not ours[0].get("value"):
            return None
        return [*others, dict(FULL_TAINT)]
    return others if ours else None


def taint_patch(resource_version: str, taints: Sequence[Any]) -> dict[str, Any]:
    """A strategic merge patch replacing `spec.taints`, which the apiserver applies only while the
    node is still at *resource_version* (409 Conflict otherwise), as kubernetes
    `pkg/controller/controller_utils.go` PatchNodeTaints does: a taint another writer added
    meanwhile is never dropped."""
    return {"metadata": {"resourceVersion": resource_version}, "spec": {"taints": list(taints)}}
