"""Policy reports as plain objects: one report per resource, named after it and owned by it.

Two APIs carry the same findings (facts from openreports/reports-api v0.2.1
`config/crd/openreports.io_{reports,clusterreports}.yaml` and kubernetes-sigs/wg-policy-prototypes
`policy-report/crd/v1alpha2/wgpolicyk8s.io_clusterpolicyreports.yaml`):

- OpenReports (`openreports.io/v1alpha1`, Report and ClusterReport) adds a top-level `source` and
  `configuration.limits.statusFilter` to the Policy WG's shape;
- `wgpolicyk8s.io/v1alpha2` (PolicyReport and ClusterPolicyReport) has neither: an apiserver prunes
  them, so they are left out rather than rewritten forever.

In both, `properties` is a map of strings. limitguard's severities are high, medium and low: the
WG's v1alpha2 CRD added critical and info only later (its copies in older clusters refuse them). Every result carries `source: limitguard` and a `resultID` property
that names what the result is about, not its numbers: Policy Reporter identifies a result by that
property when present and otherwise by a hash that includes the message
(kyverno/policy-reporter `pkg/report/result/id_generator.go`), so a changed count would re-notify.
The result's status is part of the ID: a result that goes from pass to fail is a new finding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.config import ReportsApi

SOURCE = "limitguard"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
REPORT_LABEL = "limitguard.io/report"  # node, pod or scheduler-config: which kind of finding
RESULT_ID = "resultID"
STATUSES = ("pass", "fail", "warn", "error", "skip")
# The severities every published version of both CRDs accepts (early v1alpha2 ones lack critical, info).
HIGH, MEDIUM, LOW = "high", "medium", "low"
# Properties that move with every pod bound to a node: a report that changed only in these (and in
# the messages that state them) is refreshed lazily by the leader.
MOVING_PROPERTIES = frozenset({"allocatedLimits", "topPods"})


@dataclass(frozen=True)
class ReportApi:
    """One policy report API: its group, version and the names of its two kinds."""

    name: ReportsApi
    group: str
    version: str
    namespaced_kind: str
    namespaced_plural: str
    cluster_kind: str
    cluster_plural: str
    top_level_source: bool  # `source` and `configuration` exist at the top of the report

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    def kind(self, namespaced: bool) -> str:
        return self.namespaced_kind if namespaced else self.cluster_kind

    def plural(self, namespaced: bool) -> str:
        return self.namespaced_plural if namespaced else self.cluster_plural


REPORT_APIS: Mapping[ReportsApi, ReportApi] = {
    ReportsApi.OPENREPORTS: ReportApi(
        ReportsApi.OPENREPORTS,
        "openreports.io",
        "v1alpha1",
        "Report",
        "reports",
        "ClusterReport",
        "clusterreports",
        True,
    ),
    ReportsApi.WGPOLICYK8S: ReportApi(
        ReportsApi.WGPOLICYK8S,
        "wgpolicyk8s.io",
        "v1alpha2",
        "PolicyReport",
        "policyreports",
        "ClusterPolicyReport",
        "clusterpolicyreports",
        False,
    ),
}


@dataclass(frozen=True)
class ObjectRef:
    """The resource a report is about (its scope and owner)."""

    api_version: str
    kind: str
    name: str
    namespace: str = ""  # "" for a cluster-scoped resource (a Node): its report is cluster-scoped too
    uid: str = ""

    def to_dict(self) -> dict[str, str]:
        ref = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        if self.namespace:
            ref["namespace"] = self.namespace
        if self.uid:
            ref["uid"] = self.uid
        return ref


@dataclass(frozen=True)
class Result:
    """One finding about a report's resource."""

    policy: str
    rule: str
    result: str  # one of STATUSES
    severity: str  # HIGH, MEDIUM or LOW
    category: str
    message: str
    # What the result is about within its report (a resource name, a field path): with the policy,
    # the rule and the status it makes the stable resultID; never a number that changes.
    subject: str
    properties: Mapping[str, str] = field(default_factory=dict)
    scored: bool = True


def result_id(scope: ObjectRef, result: Result) -> str:
    """Stable across leaders, relists and `limitguard audit`: a hash of what the result is about."""
    who = scope.uid or f"{scope.kind}/{scope.namespace}/{scope.name}"
    text = "\x00".join((SOURCE, who, result.policy, result.rule, result.subject, result.result))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def report_name(scope: ObjectRef) -> str:
    """`limitguard-<uid>`: one report per resource, as Kyverno and Kubewarden name theirs by the
    resource's UID, with a prefix so two tools reporting on one pod never write the same object."""
    if scope.uid:
        return f"{SOURCE}-{scope.uid}"
    digest = hashlib.sha256(f"{scope.kind}/{scope.namespace}/{scope.name}".encode()).hexdigest()[:32]
    return f"{SOURCE}-{digest}"


def summary(results: Sequence[Result]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for result in results:
        counts[result.result] += 1
    return counts


def result_dict(scope: ObjectRef, result: Result) -> dict[str, Any]:
    return {
        "source": SOURCE,
        "policy": result.policy,
        "rule": result.rule,
        "result": result.result,
        "severity": result.severity,
        "category": result.category,
        "scored": result.scored,
        "message": result.message,
        "properties": {**result.properties, RESULT_ID: result_id(scope, result)},
    }


def report_object(
    api: ReportApi,
    scope: ObjectRef,
    finding: str,
    results: Sequence[Result],
    status_filter: Sequence[str] = (),
) -> dict[str, Any]:
    """The report of *scope* (cluster-scoped when the resource is), owned by it so that garbage
    collection removes the report with the resource. *finding* labels which kind of finding it is."""
    namespaced = bool(scope.namespace)
    metadata: dict[str, Any] = {"name": report_name(scope)}
    if namespaced:
        metadata["namespace"] = scope.namespace
    metadata["labels"] = {MANAGED_BY_LABEL: SOURCE, REPORT_LABEL: finding}
    if scope.uid:
        owner = {"apiVersion": scope.api_version, "kind": scope.kind, "name": scope.name, "uid": scope.uid}
        metadata["ownerReferences"] = [owner]
    ordered = sorted(results, key=lambda r: (r.policy, r.rule, r.subject, r.result))
    report: dict[str, Any] = {
        "apiVersion": api.api_version,
        "kind": api.kind(namespaced),
        "metadata": metadata,
        "scope": scope.to_dict(),
    }
    if api.top_level_source:
        report["source"] = SOURCE
        if status_filter:
            report["configuration"] = {"limits": {"statusFilter": list(status_filter)}}
    report["summary"] = summary(ordered)
    report["results"] = [result_dict(scope, result) for result in ordered]
    return report


def verdicts(report: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """(policy, rule, status) of each result: what a reader is told, without the numbers."""
    return tuple((str(r.get("policy")), str(r.get("rule")), str(r.get("result"))) for r in _results(report))


def steady(report: Mapping[str, Any]) -> tuple[Any, ...]:
    """Each result without its message and MOVING_PROPERTIES: what changes only with a verdict, a
    ratio, a capacity or an allocatable."""
    return tuple(
        (
            *(r.get(name) for name in ("policy", "rule", "result", "severity", "category", "scored")),
            sorted((k, v) for k, v in (r.get("properties") or {}).items() if k not in MOVING_PROPERTIES),
        )
        for r in _results(report)
    )


def _results(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    results = report.get("results")
    return [r for r in (results if isinstance(results, list) else ()) if isinstance(r, Mapping)]
