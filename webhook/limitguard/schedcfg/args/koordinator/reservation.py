"""ReservationArgs (Koordinator: apis/config/v1 SetDefaults_ReservationArgs, apis/config/validation
ValidateReservationArgs, called by plugins/reservation New), as the main branch has them (a7a1b76b).

Koordinator's errors name the fields in Go spelling (``MinCandidateNodesPercentage``, ``GcDuration``);
findings use the JSON names. Which build has which field is the builds table's (``koordinator``):
gcIntervalSeconds and resyncIntervalSeconds (and their checks) came with v1.8.0; ignoredResources,
ignoredResourceGroups (PR #3067) and reservationSelectorIndex (PR #3009) after it, on main.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.names import is_qualified_name
from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...tables.readers import Reader
from ..fit import check_ignored
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls, koord_scheduler

DEFAULTS: dict[str, Any] = {
    "enablePreemption": False,
    "minCandidateNodesPercentage": 10,
    "minCandidateNodesAbsolute": 100,
    "controllerWorkers": 1,
}
#: int64 fields whose 0 SetDefaults_ReservationArgs replaces (Go cannot tell 0 from unset there).
ZERO_DEFAULTS = {"gcDurationSeconds": 86400, "gcIntervalSeconds": 60, "resyncIntervalSeconds": 60}
NON_NEGATIVE = (
    "minCandidateNodesAbsolute",
    "gcDurationSeconds",
    "gcIntervalSeconds",
    "resyncIntervalSeconds",
)


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    drop_nulls(args.get("preAllocationConfig"))
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    for name, value in ZERO_DEFAULTS.items():
        if args.get(name, 0) == 0:
            args[name] = value
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    percentage = as_go_int(args.get("minCandidateNodesPercentage"), 32)
    if percentage is not None and not 0 <= percentage <= 100:
        findings.append(
            invalid(
                path_join(path, "minCandidateNodesPercentage"),
                percentage,
                "must be in the range [0, 100]",
                "koord.reservation.percentage",
            )
        )
    for name in NON_NEGATIVE:
        value = as_go_int(args.get(name), 32 if name == "minCandidateNodesAbsolute" else 64)
        if value is not None and value < 0:
            findings.append(
                invalid(path_join(path, name), value, "must be non-negative", "koord.reservation.negative")
            )
    findings += _ignored_resources(args, path)
    findings += _surprises(args, path, percentage, reader)
    return findings


def _is_extended_resource_name(name: str) -> bool:
    """k8s.io/kubernetes pkg/apis/core/v1/helper IsExtendedResourceName: not native (it has a ``/`` and
    no ``kubernetes.io/`` anywhere), not ``requests.``-prefixed, a qualified name after ``requests.``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def _ignored_resources(args: dict[str, Any], path: str) -> list[Finding]:
    """main (PR #3067): ignoredResources must be extended resources (the fit filter checks native ones
    unconditionally), each ignoredResourceGroup usable as an extended-resource prefix."""
    return check_ignored(
        args,
        path,
        resource_ok=_is_extended_resource_name,
        resource_detail="must be an extended resource name (e.g. example.com/gpu); native resources cannot be ignored",
        group_ok=lambda group: _is_extended_resource_name(group + "/x"),
        group_detail="must be usable as an extended resource prefix (a valid DNS subdomain and not the reserved "
        '"kubernetes.io" namespace)',
        rules=("koord.reservation.ignored-resources", "koord.reservation.ignored-resources"),
    )


def _surprises(args: dict[str, Any], path: str, percentage: int | None, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    workers = as_go_int(args.get("controllerWorkers"), 32)
    if workers is not None and workers <= 0:
        findings.append(
            warning(
                path_join(path, "controllerWorkers"),
                f"{workers} is not checked by {koord_scheduler(reader)}: the reservation controller "
                "runs 1 worker",
                "koord.reservation.workers",
                workers,
            )
        )
    absolute = as_go_int(args.get("minCandidateNodesAbsolute"), 32)
    if args.get("enablePreemption") is True and percentage == 0 and absolute == 0:
        findings.append(
            warning(
                path,
                "minCandidateNodesPercentage and minCandidateNodesAbsolute are both 0: preemption for "
                "reservations is enabled but considers no candidate node, so it never evicts anything "
                "(kube-scheduler refuses this pair in DefaultPreemptionArgs; "
                f"{koord_scheduler(reader)} does not check it)",
                "koord.reservation.no-candidates",
            )
        )
    return findings


ARGS = ArgsKind("ReservationArgs", "Reservation", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
