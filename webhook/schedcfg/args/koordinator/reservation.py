"""ReservationArgs (Koordinator v1.8.0: apis/config/v1 SetDefaults_ReservationArgs,
apis/config/validation ValidateReservationArgs, called by plugins/reservation New).

Koordinator's errors name the fields in Go spelling (``MinCandidateNodesPercentage``, ``GcDuration``);
findings use the JSON names. ignoredResources, ignoredResourceGroups and reservationSelectorIndex came
after v1.8.0 (main, PRs #3067 and #3009): v1.8.0's strict decoder refuses them, so the schema reports them
as unknown fields (errors) and ``validate`` adds a note that a newer build knows them.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...report import Finding, invalid, warning
from ...rules.releases import Release
from ..kind import ArgsKind
from .common import SCHEDULER, SCHEMA_DIR, as_go_int, drop_nulls, main_only

DEFAULTS: dict[str, Any] = {
    "enablePreemption": False,
    "minCandidateNodesPercentage": 10,
    "minCandidateNodesAbsolute": 100,
    "controllerWorkers": 1,
}
#: int64 fields whose 0 SetDefaults_ReservationArgs replaces (Go cannot tell 0 from unset there).
ZERO_DEFAULTS = {"gcDurationSeconds": 86400, "gcIntervalSeconds": 60, "resyncIntervalSeconds": 60}
NEWER_FIELDS = {
    "ignoredResources": "Koordinator PR #3067",
    "ignoredResourceGroups": "Koordinator PR #3067",
    "reservationSelectorIndex": "Koordinator PR #3009",
}
NON_NEGATIVE = (
    "minCandidateNodesAbsolute",
    "gcDurationSeconds",
    "gcIntervalSeconds",
    "resyncIntervalSeconds",
)


def default(args: dict[str, Any], _path: str, _release: Release) -> list[Finding]:
    drop_nulls(args)
    drop_nulls(args.get("preAllocationConfig"))
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    for name, value in ZERO_DEFAULTS.items():
        if args.get(name, 0) == 0:
            args[name] = value
    return []


def validate(args: dict[str, Any], path: str, _release: Release) -> list[Finding]:
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
    findings += main_only(args, path, NEWER_FIELDS)
    findings += _surprises(args, path, percentage)
    return findings


def _surprises(args: dict[str, Any], path: str, percentage: int | None) -> list[Finding]:
    findings: list[Finding] = []
    workers = as_go_int(args.get("controllerWorkers"), 32)
    if workers is not None and workers <= 0:
        findings.append(
            warning(
                path_join(path, "controllerWorkers"),
                f"{workers} is not checked by {SCHEDULER}: the reservation controller runs 1 worker",
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
                "(kube-scheduler refuses this pair in DefaultPreemptionArgs; koord-scheduler does not check it)",
                "koord.reservation.no-candidates",
            )
        )
    return findings


ARGS = ArgsKind("ReservationArgs", "Reservation", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
