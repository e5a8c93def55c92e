"""`limitguard audit`: which nodes are over their limit-to-allocatable ratio right now, and why.

Nodes get over their ratio without admission failing: pods bound before limitguard was installed,
a lowered ratio or annotation, DaemonSet pods (exempt, but counted), enforcement Warn/DryRun, or a
node whose allocatable shrank. Pure: the command hands in nodes, sums and pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.config import LimitAwareConfig
from limitguard.core.fit import LimitRow
from limitguard.core.limitaware import NodeLike, effective_ratios, ratio_warnings
from limitguard.core.pools import DEFAULT, RatioSource
from limitguard.core.quantity import format_units
from limitguard.core.ratios import RATIO_ANNOTATION

DEFAULT_TOP_PODS = 5


def describe_overage(row: LimitRow) -> str:
    actual = "inf" if row.allocatable == 0 else f"{row.actual_percent:.0f}%"
    return (
        f"{row.resource} limits {row.fmt(row.allocated)} exceed capacity {row.fmt(row.capacity)} by "
        f"{row.fmt(row.excess)} ({actual} of {row.fmt(row.allocatable)} allocatable, ratio {row.percent}%"
        f"{row.ratio_note})"
    )


def overage_dict(row: LimitRow) -> dict[str, Any]:
    return {
        "resource": row.resource,
        "allocated": row.fmt(row.allocated),
        "capacity": row.fmt(row.capacity),
        "excess": row.fmt(row.excess),
        "allocatable": row.fmt(row.allocatable),
        "ratioPercent": row.percent,
        "actualPercent": None if row.allocatable == 0 else round(row.actual_percent, 1),
    }


@dataclass(frozen=True)
class PodShare:
    """One pod's limits on an over node, for the over resources."""

    pod: str
    limits: Mapping[str, int]
    daemonset: bool = False


@dataclass
class NodeFinding:
    node: str
    overages: list[LimitRow]
    top_pods: list[PodShare] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ratio_source: RatioSource = DEFAULT  # where the node's ratio map came from

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "ratioSource": self.ratio_source.label,
            "over": [overage_dict(overage) for overage in self.overages],
            "topPods": [
                {
                    "pod": share.pod,
                    "daemonSet": share.daemonset,
                    "limits": {r: format_units(r, a) for r, a in share.limits.items()},
                }
                for share in self.top_pods
            ],
            "warnings": self.warnings,
        }


@dataclass
class AuditReport:
    nodes_checked: int  # nodes with at least one ratio: the only ones that can be over
    findings: list[NodeFinding]
    nodes_without_ratio: int = 0  # no annotation and no default ratio: nothing to check on them
    pod_rules: str = ""  # which release's pod rules counted the limits, and why
    warnings: list[str] = field(default_factory=list)  # e.g. a release outside the supported range

    @property
    def over(self) -> bool:
        return bool(self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodesChecked": self.nodes_checked,
            "nodesWithoutRatio": self.nodes_without_ratio,
            "nodesOver": len(self.findings),
            "findings": [finding.to_dict() for finding in self.findings],
            **({"podRules": self.pod_rules} if self.pod_rules else {}),
            "warnings": self.warnings,
        }


def node_overages(node: NodeLike, allocated: Mapping[str, int], config: LimitAwareConfig) -> list[LimitRow]:
    """Every checked resource whose summed limits exceed the node's limit capacity."""
    ratio_source = node.ratio_source.describe()
    rows = (
        LimitRow(
            resource,
            node.allocatable.get(resource, 0),
            percent,
            allocated.get(resource, 0),
            ratio_source=ratio_source,
        )
        for resource, percent in sorted(effective_ratios(node, config).items())
    )
    return [row for row in rows if row.excess > 0]


def _share_key(overages: Sequence[LimitRow]) -> Callable[[PodShare], tuple[Any, ...]]:
    """Largest share of the over resources first: each resource's share of its node's excess."""

    def key(share: PodShare) -> tuple[Any, ...]:
        weight = sum(share.limits.get(o.resource, 0) / max(o.capacity, 1) for o in overages)
        return (-weight, share.pod)

    return key


def audit(
    nodes: Iterable[NodeLike],
    allocated_of: Callable[[str], Mapping[str, int]],
    pods_on: Callable[[set[str]], Mapping[str, list[PodShare]]],
    config: LimitAwareConfig,
    *,
    top: int = DEFAULT_TOP_PODS,
    checked_before: int = 0,
    unchecked_before: int = 0,
) -> AuditReport:
    """Nodes over their ratio, worst first, each with the *top* pods contributing most.

    *pods_on* maps a set of node names to their counted pods; it is called once, only for the over
    nodes, so a clean cluster never walks its pods. A caller that screened the nodes already (the
    node table) hands in only the candidates and counts the others in *checked_before* (they have
    a ratio and are within it) and *unchecked_before* (no ratio applies to them).
    """
    checked, unchecked = checked_before, unchecked_before
    findings: list[NodeFinding] = []
    for node in nodes:
        if not effective_ratios(node, config):
            unchecked += 1
            continue
        checked += 1
        overages = node_overages(node, allocated_of(node.traits.name), config)
        if overages:
            findings.append(
                NodeFinding(
                    node.traits.name,
                    overages,
                    warnings=list(ratio_warnings(node)),
                    ratio_source=node.ratio_source,
                )
            )
    if findings:
        pods = pods_on({finding.node for finding in findings})
        for finding in findings:
            over = {overage.resource for overage in finding.overages}
            shares = [
                PodShare(share.pod, {r: a for r, a in share.limits.items() if r in over}, share.daemonset)
                for share in pods.get(finding.node, [])
                if any(share.limits.get(r, 0) > 0 for r in over)
            ]
            finding.top_pods = sorted(shares, key=_share_key(finding.overages))[:top]
    findings.sort(key=lambda f: (-max(o.allocated / max(o.capacity, 1) for o in f.overages), f.node))
    return AuditReport(checked, findings, unchecked)


NO_RATIO_HINT = (
    "set limitAware.defaultLimitToAllocatableRatio or limitAware.nodePools in the file given with "
    f"--config, or annotate nodes with {RATIO_ANNOTATION}"
)


def render_text(report: AuditReport) -> str:
    if report.nodes_checked == 0:
        return (
            f"nothing was checked: none of the {report.nodes_without_ratio} nodes has a "
            f"limit-to-allocatable ratio ({NO_RATIO_HINT})\n"
        )
    unchecked = (
        f"; {report.nodes_without_ratio} nodes without a ratio were not checked"
        if report.nodes_without_ratio
        else ""
    )
    if not report.findings:
        return f"all {report.nodes_checked} checked nodes are within their limit-to-allocatable ratio{unchecked}\n"
    lines = [
        f"{len(report.findings)} of {report.nodes_checked} checked nodes are over their "
        f"limit-to-allocatable ratio{unchecked}",
        "",
    ]
    for finding in report.findings:
        lines.append(f"node {finding.node}")
        lines += [f"  over: {describe_overage(overage)}" for overage in finding.overages]
        lines += [f"  warning: {text}" for text in finding.warnings]
        if finding.top_pods:
            lines.append("  pods contributing most:")
            for share in finding.top_pods:
                amounts = ", ".join(f"{r} {format_units(r, a)}" for r, a in sorted(share.limits.items()))
                lines.append(f"    {share.pod}  {amounts}" + ("  (DaemonSet)" if share.daemonset else ""))
        lines.append("")
    return "\n".join(lines)
