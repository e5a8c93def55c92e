"""The limit-ratio findings as policy report results: a Node's ClusterReport and a violating pod's Report.

Pure: the caller hands in the node's record, its summed limits and the pods on it. A node's report
has one result per resource of its effective ratio map (SPEC 2): `pass` within the capacity, `fail`
over it. A pod is *in violation* when its node is over its ratio for a resource the pod limits: a
binding of it to that node would be denied now (its own limit counted once, as admission counts it).
Only pods whose namespace runs Warn or DryRun can be there through limitguard; Warn reports `warn`,
DryRun `fail` (as Gatekeeper's dry-run and Kyverno's Audit report their violations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from limitguard.core.config import Enforcement, LimitAwareConfig
from limitguard.core.fit import LimitRow
from limitguard.core.limitaware import NodeLike, effective_ratios, ratio_warnings
from limitguard.core.reports.audit import PodShare, describe_overage
from limitguard.core.reports.policyreport import MEDIUM, ObjectRef, ReportApi, Result, report_object

NODE_POLICY = "node-limit-ratio"
POD_POLICY = "pod-limit-ratio"
CATEGORY = "Limit ratio"
NODE_FINDING, POD_FINDING = "node", "pod"
TOP_HOLDERS = 3  # pods named in a fail result: the ones that hold the most of the resource
POD_STATUS_FILTER = ("warn", "fail")
POD_RESULT = {Enforcement.WARN: "warn", Enforcement.DRY_RUN: "fail"}


def node_rows(node: NodeLike, allocated: Mapping[str, int], config: LimitAwareConfig) -> list[LimitRow]:
    """One row per resource of the node's effective ratio map, in name order."""
    source = node.ratio_source.describe()
    return [
        LimitRow(
            resource,
            node.allocatable.get(resource, 0),
            percent,
            allocated.get(resource, 0),
            ratio_source=source,
        )
        for resource, percent in sorted(effective_ratios(node, config).items())
    ]


def over_resources(rows: Iterable[LimitRow]) -> frozenset[str]:
    return frozenset(row.resource for row in rows if row.excess > 0)


def top_holders(
    shares: Iterable[PodShare], resources: Iterable[str], top: int = TOP_HOLDERS
) -> dict[str, list[str]]:
    """Per resource, the pods holding the largest limits of it (largest first, then by name)."""
    shares = list(shares)
    held: dict[str, list[str]] = {}
    for resource in resources:
        holders = sorted(
            (s for s in shares if s.limits.get(resource, 0) > 0), key=lambda s: (-s.limits[resource], s.pod)
        )
        held[resource] = [share.pod for share in holders[:top]]
    return held


def describe_within(row: LimitRow) -> str:
    return (
        f"{row.resource} limits {row.fmt(row.allocated)} are within capacity {row.fmt(row.capacity)} "
        f"({row.fmt(row.allocatable)} allocatable, ratio {row.percent}%{row.ratio_note})"
    )


def _row_properties(row: LimitRow) -> dict[str, str]:
    return {
        "resource": row.resource,
        "allocatedLimits": row.fmt(row.allocated),
        "limitCapacity": row.fmt(row.capacity),
        "allocatable": row.fmt(row.allocatable),
        "ratio": f"{row.percent}%",
    }


def node_results(
    node: NodeLike, rows: Sequence[LimitRow], holders: Mapping[str, Sequence[str]]
) -> list[Result]:
    warnings = ratio_warnings(node)
    results = []
    for row in rows:
        over = row.excess > 0
        properties = {**_row_properties(row), "ratioSource": node.ratio_source.label}
        if over and holders.get(row.resource):
            properties["topPods"] = ", ".join(holders[row.resource])
        if warnings:
            properties["ratioWarning"] = "; ".join(warnings)
        results.append(
            Result(
                NODE_POLICY,
                row.resource,
                "fail" if over else "pass",
                MEDIUM,
                CATEGORY,
                describe_overage(row) if over else describe_within(row),
                row.resource,
                properties,
            )
        )
    return results


def node_scope(node: NodeLike, uid: str) -> ObjectRef:
    return ObjectRef("v1", "Node", node.traits.name, "", uid)


def node_report(
    api: ReportApi, node: NodeLike, uid: str, rows: Sequence[LimitRow], holders: Mapping[str, Sequence[str]]
) -> dict:
    return report_object(api, node_scope(node, uid), NODE_FINDING, node_results(node, rows, holders))


@dataclass(frozen=True)
class PodViolation:
    """A pod running on a node over its ratio for resources the pod limits."""

    scope: ObjectRef
    node: str
    enforcement: Enforcement
    pod_limits: Mapping[str, int]
    rows: tuple[LimitRow, ...]  # the node's over resources that the pod limits

    @property
    def weight(self) -> float:
        """The pod's share of its node's excess: the largest get a report first when reports are bounded."""
        return sum(self.pod_limits.get(row.resource, 0) / max(row.capacity, 1) for row in self.rows)


def pod_violation_rows(
    pod_limits: Mapping[str, int], node_rows_over: Iterable[LimitRow]
) -> tuple[LimitRow, ...]:
    return tuple(row for row in node_rows_over if row.excess > 0 and pod_limits.get(row.resource, 0) > 0)


def pod_results(violation: PodViolation) -> list[Result]:
    status = POD_RESULT[violation.enforcement]
    results = []
    for row in violation.rows:
        limit = violation.pod_limits[row.resource]
        message = (
            f"{row.resource} limit {row.fmt(limit)} runs on node {violation.node}, whose {describe_overage(row)}; "
            f"a binding would be denied under Deny (enforcement here: {violation.enforcement.value})"
        )
        properties = {
            **_row_properties(row),
            "node": violation.node,
            "podLimit": row.fmt(limit),
            "enforcement": violation.enforcement.value,
        }
        results.append(
            Result(POD_POLICY, row.resource, status, MEDIUM, CATEGORY, message, row.resource, properties)
        )
    return results


def pod_report(api: ReportApi, violation: PodViolation) -> dict:
    return report_object(api, violation.scope, POD_FINDING, pod_results(violation), POD_STATUS_FILTER)
