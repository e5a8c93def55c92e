"""`limitguard explain`: for one pod, what every node says and why (pure; the command reads state).

Per node: eligibility (the scheduler's node filters limitguard mirrors), the limit sums before and
after the pod for each checked resource, capacity and ratio, whether the pod fits and why not, and
what each scorer would give. Scores are computed over the nodes kube-scheduler would send to the
extender's prioritize call: eligible and fitting ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.config import Enforcement, LimitAwareConfig
from limitguard.core.eligibility import Placement
from limitguard.core.fit import LimitRow, shortfalls, source_note
from limitguard.core.limitaware import NodeLike, effective_ratios, ratio_warnings
from limitguard.core.podrules import scheduling_group
from limitguard.core.pools import DEFAULT, RatioSource
from limitguard.core.quantity import format_units
from limitguard.core.ratios import limit_capacity
from limitguard.core.roomlabels import label_value, resource_of_label, room_label_key, unit_name
from limitguard.core.scoring import NodeFacts, PodFacts, ScorerConfig, ScoreSheet, score_candidates


def check_dict(row: LimitRow) -> dict[str, Any]:
    """One resource of one node in explain's JSON: before and after the pod, against capacity."""
    return {
        "resource": row.resource,
        "podLimit": row.fmt(row.pod_limit),
        "before": row.fmt(row.allocated),
        "after": row.fmt(row.after),
        "capacity": row.fmt(row.capacity),
        "allocatable": row.fmt(row.allocatable),
        "ratioPercent": row.percent,
        "fits": row.fits,
    }


@dataclass(frozen=True)
class NodeScore:
    scorer: str
    raw: int
    score: int  # 0..100


@dataclass
class NodeExplanation:
    node: str
    rejection: str | None  # why the node is not eligible; None when it is
    checks: list[LimitRow]
    shortfalls: list[str]  # LimitRow.describe() of every resource that does not fit
    warnings: list[str]
    ratio_source: RatioSource = DEFAULT  # where the node's ratio map came from
    scores: list[NodeScore] = field(default_factory=list)  # empty unless the node is a candidate
    total: int | None = None  # weighted 0..100
    priority: int | None = None  # extender 0..10
    # resource -> (its limitguard.io/limit-room-* label on the node, None: none; what it would say now)
    room_labels: dict[str, tuple[str | None, str]] = field(default_factory=dict)

    @property
    def eligible(self) -> bool:
        return self.rejection is None

    @property
    def fits(self) -> bool:
        return not self.shortfalls

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "eligible": self.eligible,
            "ineligibleReason": self.rejection,
            "fits": self.fits,
            "ratioSource": self.ratio_source.label,
            "resources": [check_dict(check) for check in self.checks],
            "shortfalls": self.shortfalls,
            "warnings": self.warnings,
            "scores": {score.scorer: {"raw": score.raw, "score": score.score} for score in self.scores},
            "total": self.total,
            "extenderScore": self.priority,
            "roomLabels": {
                resource: {"labelled": labelled, "true": true, "unit": unit_name(resource)}
                for resource, (labelled, true) in self.room_labels.items()
            },
        }


@dataclass
class Explanation:
    pod: str
    limits: Mapping[str, int]
    scoring_requests: Mapping[str, int]
    scorers: list[ScorerConfig]
    nodes: list[NodeExplanation]
    notes: list[str] = field(default_factory=list)
    sources: Mapping[str, str] = field(default_factory=dict)  # PodAmounts.sources: limits that are requests
    warnings: list[str] = field(default_factory=list)  # e.g. a release outside the supported range

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "limits": {resource: format_units(resource, amount) for resource, amount in self.limits.items()},
            "limitSources": dict(self.sources),  # resource -> "request" | "limit-and-request"
            "scoringRequests": {
                resource: format_units(resource, amount) for resource, amount in self.scoring_requests.items()
            },
            "scorers": [{"name": scorer.name, "weight": scorer.weight} for scorer in self.scorers],
            "notes": self.notes,
            "warnings": self.warnings,
            "nodes": [node.to_dict() for node in self.nodes],
        }


def _checks(
    pod_limits: Mapping[str, int],
    node: NodeLike,
    allocated: Mapping[str, int],
    ratios: Mapping[str, int],
    sources: Mapping[str, str],
    ratio_source: str,
) -> list[LimitRow]:
    return [
        LimitRow(
            resource,
            node.allocatable.get(resource, 0),
            percent,
            allocated.get(resource, 0),
            pod_limits.get(resource, 0),
            sources.get(resource, ""),
            ratio_source,
        )
        for resource, percent in sorted(ratios.items())
    ]


def room_labels(
    node: NodeLike, allocated: Mapping[str, int], ratios: Mapping[str, int]
) -> dict[str, tuple[str | None, str]]:
    """Each room label the node carries or should carry: its value, and the node's true room in
    the label's units (rounded down; the int64 maximum where the node does not check it)."""
    labels = node.traits.labels
    resources = set(ratios) | {found for key in labels if (found := resource_of_label(key)) is not None}
    shown = {}
    for resource in sorted(resources):
        key = room_label_key(resource)
        room = None
        if resource in ratios:
            room = limit_capacity(node.allocatable.get(resource, 0), ratios[resource]) - allocated.get(
                resource, 0
            )
        shown[resource] = (labels.get(key) if key is not None else None, label_value(room, resource))
    return shown


def explain_pod(
    pod: Mapping[str, Any],
    pod_limits: Mapping[str, int],
    pod_facts: PodFacts,
    nodes: Sequence[NodeLike],
    allocated_of: Callable[[str], Mapping[str, int]],
    facts_of: Callable[[Any], NodeFacts],
    config: LimitAwareConfig,
    scorers: Sequence[ScorerConfig],
    *,
    exempt: bool = False,
    score: Callable[[list[Any]], ScoreSheet | None] | None = None,
    sources: Mapping[str, str] | None = None,
) -> Explanation:
    """Explain *pod* against every node; *facts_of* gives a node's scoring inputs; *sources* (the
    pod's PodAmounts.sources) name the limits that are requests.

    *score*, when given, scores the candidate nodes in one pass (the node table's columns) and
    may answer None, in which case score_candidates over *facts_of* does.
    """
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    name = f"{metadata.get('namespace') or 'default'}/{metadata.get('name') or '<unnamed>'}"
    placement = Placement(spec)
    notes: list[str] = []
    bound = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) else ""
    if bound:
        notes.append(f"spec.nodeName is {bound}: the scheduler is bypassed; admission checks that node alone")
    if exempt:
        notes.append("DaemonSet pod: admission never rejects it, the extender filter passes every node")
    if config.enforcement is not Enforcement.DENY:
        notes.append(
            f"enforcement is {config.enforcement}: nothing is rejected, the extender filter passes every node"
        )
    group = scheduling_group(spec)
    if group:
        notes.append(
            f"the pod belongs to pod group {group}: the scheduler places the group together but binds its "
            "members one by one, so a member denied on a node leaves the others bound"
        )
    sources = sources or {}
    rows: list[NodeExplanation] = []
    candidates: list[tuple[NodeExplanation, NodeLike]] = []
    for node in sorted(nodes, key=lambda node: node.traits.name):
        node_name = node.traits.name
        allocated = allocated_of(node_name)
        ratios = effective_ratios(node, config)
        ratio_source = node.ratio_source.describe()
        found = shortfalls(pod_limits, node.allocatable, allocated, ratios, sources, ratio_source)
        row = NodeExplanation(
            node=node_name,
            rejection=(
                f"the pod names node {bound} (spec.nodeName)"
                if bound and node_name != bound
                else placement.rejection(node.traits)
            ),
            checks=_checks(pod_limits, node, allocated, ratios, sources, ratio_source),
            shortfalls=[shortfall.describe() for shortfall in found],
            warnings=list(ratio_warnings(node)),
            ratio_source=node.ratio_source,
            room_labels=room_labels(node, allocated, ratios),
        )
        rows.append(row)
        filtered_out = row.shortfalls and not exempt and config.enforcement is Enforcement.DENY
        if row.eligible and not filtered_out and not bound:  # a bound pod is never scored
            candidates.append((row, node))
    sheet = score([node for _, node in candidates]) if score is not None else None
    if sheet is None:
        sheet = score_candidates(
            pod_facts, [facts_of(node) for _, node in candidates], scorers, config.default_ratios
        )
    for index, (row, _) in enumerate(candidates):
        row.scores = [
            NodeScore(column.name, column.raw[index], column.scores[index]) for column in sheet.columns
        ]
        row.total = sheet.totals[index]
        row.priority = sheet.priorities[index]
    if not candidates and not bound:
        notes.append("no node is a candidate: the scheduler would not call prioritize")
    return Explanation(
        name, dict(pod_limits), dict(pod_facts.requests), list(scorers), rows, notes, dict(sources)
    )


# -- text rendering ---------------------------------------------------------------------------
_SCORER_ABBREVIATIONS = {
    "LimitAware": "LA",
    "NodeResourcesFitPlus": "NRFP",
    "ScarceResourceAvoidance": "SRA",
    "PodState": "PS",
}


_BINARY_SUFFIXES = (("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024))


def column_unit(resource: str, amounts: Sequence[int]) -> tuple[str, Callable[[int], str]]:
    """One unit for a whole table column: cpu in cores, byte sizes in the binary unit of the
    column's largest value (`~` where one decimal is not exact), other resources as counts."""
    if resource == "cpu":
        return "cores", lambda millis: f"{millis / 1000:.3f}".rstrip("0").rstrip(".")
    byte_sized = resource in ("memory", "ephemeral-storage", "storage") or resource.startswith("hugepages-")
    if not byte_sized:
        return "", lambda amount: format_units(resource, amount)
    largest = max((abs(amount) for amount in amounts), default=0)
    suffix, step = next(((s, n) for s, n in _BINARY_SUFFIXES if largest >= n), ("bytes", 1))

    def in_unit(amount: int) -> str:
        text = f"{amount / step:.1f}".removesuffix(".0")
        return text if (amount * 10) % step == 0 else f"~{text}"

    return suffix, in_unit


def _amounts(amounts: Mapping[str, int], sources: Mapping[str, str] | None = None) -> str:
    sources = sources or {}
    return (
        ", ".join(
            f"{r} {format_units(r, a)}{source_note(sources.get(r, ''))}" for r, a in sorted(amounts.items())
        )
        or "none"
    )


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[index]) for row in [header, *rows]) for index in range(len(header))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]


def render_text(explanation: Explanation) -> str:
    """A table a person reads at a glance, then the reasons behind every "no"."""
    lines = [
        f"pod {explanation.pod}",
        f"  limits:           {_amounts(explanation.limits, explanation.sources)}",
        f"  scoring requests: {_amounts(explanation.scoring_requests)} (non-zero defaults for cpu/memory)",
        "  scorers:          "
        + ", ".join(
            f"{_SCORER_ABBREVIATIONS.get(s.name, s.name)}={s.name} x{s.weight}"
            + ("" if s.weight else " (shown, not counted)")
            for s in explanation.scorers
        ),
    ]
    lines += [f"  note: {note}" for note in explanation.notes]
    resources = sorted({check.resource for row in explanation.nodes for check in row.checks})
    units = {
        resource: column_unit(
            resource,
            [
                amount
                for row in explanation.nodes
                for check in row.checks
                if check.resource == resource
                for amount in (check.allocated, check.after, check.capacity)
            ],
        )
        for resource in resources
    }
    header = ["NODE", "ELIGIBLE", "FITS", "RATIOS"]
    header += [
        f"{resource.upper()}({units[resource][0]}) BEFORE->AFTER/CAP"
        if units[resource][0]
        else f"{resource.upper()} BEFORE->AFTER/CAP"
        for resource in resources
    ]
    header += [_SCORER_ABBREVIATIONS.get(s.name, s.name) for s in explanation.scorers] + ["TOTAL", "EXT"]
    rows = []
    for row in explanation.nodes:
        by_resource = {check.resource: check for check in row.checks}
        # The limit check matters only where the pod may go: no verdict for ineligible nodes.
        cells = [
            row.node,
            "yes" if row.eligible else "no",
            "-" if not row.eligible else "yes" if row.fits else "NO",
            row.ratio_source.label,
        ]
        for resource in resources:
            check = by_resource.get(resource)
            if check is None:
                cells.append("-")
                continue
            fmt = units[resource][1]
            cells.append(
                f"{fmt(check.allocated)}->{fmt(check.after)}/{fmt(check.capacity)} ({check.percent}%)"
            )
        scores = {score.scorer: score for score in row.scores}
        for scorer in explanation.scorers:
            score = scores.get(scorer.name)
            cells.append("-" if score is None else str(score.score))
        cells += [
            "-" if row.total is None else str(row.total),
            "-" if row.priority is None else str(row.priority),
        ]
        rows.append(cells)
    lines += ["", *_table(header, rows)]
    reasons = []
    for row in explanation.nodes:
        if row.rejection is not None:
            reasons.append(f"  {row.node}: not eligible: {row.rejection}")
        else:
            reasons += [f"  {row.node}: {text}" for text in row.shortfalls]
        reasons += [f"  {row.node}: warning: {text}" for text in row.warnings]
    if reasons:
        lines += ["", "why:", *reasons]
    lines += _room_label_lines(explanation.nodes)
    return "\n".join(lines) + "\n"


def _room_label_lines(nodes: Sequence[NodeExplanation]) -> list[str]:
    """Each node's limitguard.io/limit-room-* labels beside its true room (what the placement
    hint is judged against, and how far behind the labels are)."""
    if not any(row.room_labels for row in nodes):
        return []
    resources = sorted({resource for row in nodes for resource in row.room_labels})
    units = ", ".join(f"{resource} in {unit_name(resource)}" for resource in resources)
    rows = []
    for row in nodes:
        cells = [row.node]
        for resource in resources:
            labelled, true = row.room_labels.get(resource, (None, "-"))
            note = "" if labelled == true else " (no label)" if labelled is None else " (behind)"
            cells.append(f"{'-' if labelled is None else labelled} / {true}{note}")
        rows.append(cells)
    header = ["NODE", *(f"{resource.upper()} LABEL / TRUE" for resource in resources)]
    table = ["  " + line for line in _table(header, rows)]
    return ["", f"room labels (limitguard.io/limit-room-*; {units}):", *table]
