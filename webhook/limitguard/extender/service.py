"""Filter and prioritize over the cluster state: the extender's decisions, without HTTP.

Filter is the same limit-to-allocatable check as admission (real limits, ledger included), so a
node the extender lets through is one the binding webhook will accept. Prioritize weights the
configured scorers (limitguard.core.scoring). Both fail open: a node or pod we cannot judge is passed
(filter) or scored 0 (prioritize), never turned into a scheduling failure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from limitguard.core.config import Config, Enforcement, NotReadyPolicy
from limitguard.core.fit import shortfalls, source_note
from limitguard.core.limitaware import effective_ratios
from limitguard.core.podlimits import PodSpecError, pod_amounts
from limitguard.core.scoring import PodFacts, ScoreSheet
from limitguard.errors import LimitguardError
from limitguard.extender.columnar import filter_rows, score_rows
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.keptscores import KeptScores
from limitguard.extender.namelists import NameLists
from limitguard.extender.protocol import ExtenderArgs, PriorityTemplate
from limitguard.state.candidates import Candidates
from limitguard.state.records import controller_of, is_mirror_pod, node_record
from limitguard.state.store import ClusterState
from limitguard.state.table import NodeTable

log = logging.getLogger(__name__)

NOT_READY_MESSAGE = "limitguard: cluster state not synced yet"


class ExtenderUnavailable(LimitguardError, RuntimeError):
    """The extender must answer with an error (state not ready and whileNotReady: Deny)."""


@dataclass
class FilterOutcome:
    passed: list[str]
    failed: dict[str, str]
    reason: str  # checked | exempt | excluded | no-limits | not-enforced | not-ready | unreadable-pod
    unknown: int = 0  # candidates the state does not know (passed)


@dataclass(eq=False)  # __eq__ below: the scores are held in either of two forms
class PrioritizeOutcome:
    hosts: list[str]  # the candidates, in the scheduler's order
    listed_scores: list[int] | None  # 0..10 each; None while only score_array holds them
    unknown: int = 0
    reason: str = "scored"
    notes: list[str] = field(default_factory=list)
    # The score sheet (explain-style detail), built only when asked for: the route never needs it.
    sheet_of: Callable[[], ScoreSheet] | None = field(default=None, repr=False)
    # The hosts JSON-encoded (from the node table), when every candidate is a known node.
    host_json: list[bytes] | None = field(default=None, repr=False)
    score_array: np.ndarray | None = field(default=None, repr=False)  # = scores
    # The answer's bytes with every score 0, when these candidates were scored before (kept per list).
    template: PriorityTemplate | None = field(default=None, repr=False)

    @property
    def scores(self) -> list[int]:
        """0..10 each, in the hosts' order. The route answers from score_array and never lists
        them (5,000 Python ints, 20 us)."""
        if self.listed_scores is None:
            assert self.score_array is not None
            self.listed_scores = self.score_array.tolist()
        return self.listed_scores

    def __eq__(self, other: object) -> bool:
        """The same answer: hosts, scores (in whichever form), unknown count, reason and notes."""
        if not isinstance(other, PrioritizeOutcome):
            return NotImplemented
        mine = (self.hosts, self.scores, self.unknown, self.reason, self.notes)
        return mine == (other.hosts, other.scores, other.unknown, other.reason, other.notes)

    @property
    def priorities(self) -> list[tuple[str, int]]:
        return list(zip(self.hosts, self.scores, strict=True))

    @property
    def sheet(self) -> ScoreSheet | None:
        return self.sheet_of() if self.sheet_of is not None else None


def failure_reason(resources: list[str], ratio_source: str, sources: Mapping[str, str] | None = None) -> str:
    """The FailedNodes message: it names no node, so kube-scheduler's event aggregates it per ratio
    source ("0/5 nodes are available: 3 limit-to-allocatable ratio exceeded (cpu; pool gpu), ...").
    *sources*: the pod's PodAmounts.sources, so a request counted as the limit is named as one
    ("... exceeded (cpu (its request; no limit set); cluster default)")."""
    if sources:
        resources = [name + source_note(sources.get(name, "")) for name in resources]
    return f"limit-to-allocatable ratio exceeded ({', '.join(resources)}; {ratio_source})"


def _scored_zero(args: ExtenderArgs, reason: str) -> PrioritizeOutcome:
    """Every candidate 0, for *reason* (the scores were not computed)."""
    return PrioritizeOutcome(list(args.node_names), [0] * len(args.node_names), reason=reason)


class Extender:
    def __init__(self, state: ClusterState, config: Config, extender_config: ExtenderConfig) -> None:
        self.state = state
        self.config = config
        self.extender_config = extender_config
        self.name_lists = NameLists()  # the candidate lists sent lately, for decoding the next calls
        self._kept_scores = KeptScores(extender_config.scorers, config.limit_aware.default_ratios)
        # The last candidates prioritized, and their answer template once they came a second time.
        self._template: tuple[Candidates, PriorityTemplate | None] | None = None

    def _template_of(self, candidates: Candidates) -> PriorityTemplate | None:
        """The answer template of *candidates* (all known), built the second time they are scored:
        a list seen once may never come again, and building costs about one answer."""
        kept = self._template
        if kept is None or kept[0] is not candidates:
            self._template = (candidates, None)
            return None
        if kept[1] is None and candidates.count:
            self._template = (candidates, PriorityTemplate(candidates.host_json()))
        return self._template[1]

    def _request_table(self, args: ExtenderArgs) -> NodeTable:
        """The node table for a request carrying Node objects (nodeCacheCapable: false): the
        state's while every Node sent is what the cache holds (the usual case), else one of the
        request's own, whose rows are the scheduler's Nodes (labels, allocatable, ratio map: the
        pool its labels choose) with the state's sums."""
        assert args.nodes is not None
        table = self.state.node_table()  # expired ledger entries dropped, sums synced
        pool_of = self.state.pool_of  # the scheduler's labels pick the pool
        records = []
        as_cached = True
        for name in dict.fromkeys(args.node_names):
            sent = args.nodes.get(name)
            cached = self.state.node(name)
            record = node_record(sent, pool_of) if sent is not None else cached
            if record is not None and record.name == name:
                records.append(record)
                as_cached = as_cached and record == cached
            elif record is not None:
                as_cached = False  # a Node sent under another name: its own row, not the cache's
        if as_cached:
            return table
        own = NodeTable()
        for record in records:
            own.upsert_node(record)
        own.sync(self.state.sum_sources)
        return own

    def scored(self, args: ExtenderArgs, pod: PodFacts) -> PrioritizeOutcome:
        """The candidates' scores, on the node table (kept per pod shape for the state's)."""
        table = self.state.node_table() if args.nodes is None else self._request_table(args)
        candidates = table.candidates(args.node_names, args.names_key)
        names = args.node_names
        known_names = (
            names
            if not candidates.unknown
            else [name for name, k in zip(names, candidates.known.tolist(), strict=True) if k]
        )
        on_state = args.nodes is None or table is self.state.table
        if on_state:
            scored = self._kept_scores.score(table, candidates, known_names, pod)
        else:  # a table of this request's own: nothing to keep
            scored = score_rows(
                table,
                candidates.index,
                known_names,
                pod,
                self.extender_config.scorers,
                self.config.limit_aware.default_ratios,
            )
        # A name listed twice has one row, so one score: the positions can be filled directly.
        host_json = template = None
        if not candidates.unknown:
            priorities = scored.priorities
            host_json = candidates.host_json()
            if on_state:
                template = self._template_of(candidates)
        else:
            priorities = np.zeros(len(names), np.int64)
            priorities[candidates.known] = scored.priorities
        return PrioritizeOutcome(
            names,  # the decoded request's own list: nothing writes to it
            None,  # listed from score_array only if asked
            candidates.unknown,
            sheet_of=scored.to_sheet,
            host_json=host_json,
            score_array=priorities,
            template=template,
        )

    def _pass_all(self, args: ExtenderArgs, reason: str) -> FilterOutcome:
        return FilterOutcome(list(args.node_names), {}, reason)

    def filter(self, args: ExtenderArgs) -> FilterOutcome:
        """Drop the candidates whose limit-to-allocatable ratio the pod's limits would exceed."""
        limit_aware = self.config.limit_aware
        if not self.state.ready:
            if self.config.while_not_ready is NotReadyPolicy.DENY:
                raise ExtenderUnavailable(NOT_READY_MESSAGE)
            return self._pass_all(args, "not-ready")
        metadata = args.pod_metadata
        if metadata.get("namespace") in self.config.excluded_namespaces:
            return self._pass_all(args, "excluded")
        override = limit_aware.namespace_enforcement.get(str(metadata.get("namespace") or "default"))
        if (override or limit_aware.enforcement) is not Enforcement.DENY:
            return self._pass_all(args, "not-enforced")  # admission would allow; so must we
        if limit_aware.exempts(controller_of(metadata)) or is_mirror_pod(metadata):
            return self._pass_all(args, "exempt")
        try:
            status = args.pod.get("status")
            amounts = pod_amounts(
                args.pod_spec, status if isinstance(status, Mapping) else None, self.state.pod_rules
            )
        except PodSpecError as error:
            log.warning("extender filter: pod %s unreadable, passing all: %s", args.describe_pod(), error)
            return self._pass_all(args, "unreadable-pod")
        limits, sources = amounts.limits, amounts.sources
        used = [(resource, amount) for resource, amount in limits.items() if amount > 0]
        if not used:
            return self._pass_all(args, "no-limits")

        def reason(resources: list[str], ratio_source: str) -> str:
            return failure_reason(resources, ratio_source, sources)

        return self.checked(args, limits, sources, reason)

    def checked(
        self,
        args: ExtenderArgs,
        limits: Mapping[str, int],
        sources: Mapping[str, str],
        reason: Callable[[list[str], str], str],
    ) -> FilterOutcome:
        """The candidates that take the pod's *limits*, on the node table; *reason* names a failure."""
        limit_aware = self.config.limit_aware
        table = self.state.node_table() if args.nodes is None else self._request_table(args)
        candidates = table.candidates(args.node_names, args.names_key)
        # As admission does (addNominatedPods): room held for nominated pods of equal or higher priority.
        held = None
        if self.state.has_nominated_pods():
            priority = args.pod_spec.get("priority")
            held = self.state.nominated_holds(priority if type(priority) is int else 0, args.describe_pod())
        passed, failed, unknown, passed_key = filter_rows(
            table, args.node_names, candidates, limits, limit_aware.default_ratios, reason, held
        )
        if passed_key is not None and args.nodes is None:  # kube-scheduler sends these to prioritize next
            self.name_lists.keep(passed_key, passed)
        if failed and log.isEnabledFor(logging.DEBUG):
            self._log_shortfalls(args, table, failed, limits, sources, held or {})
        return FilterOutcome(passed, failed, "checked", unknown)

    def _log_shortfalls(
        self,
        args: ExtenderArgs,
        table: NodeTable,
        failed: Mapping[str, str],
        limits: Mapping[str, int],
        sources: Mapping[str, str],
        held: Mapping[str, Mapping[str, int]],
    ) -> None:
        """Each failed node's shortfalls, at debug level (worked out only then)."""
        ratios_of = self.config.limit_aware
        for name in failed:
            record = table.records[table.rows[name]]
            if record is None:
                continue
            allocated = dict(self.state.allocated(name))
            for resource, amount in held.get(name, {}).items():
                allocated[resource] = allocated.get(resource, 0) + amount
            found = shortfalls(
                limits,
                record.allocatable,
                allocated,
                effective_ratios(record, ratios_of),
                sources,
                record.ratio_source.describe(),
            )
            log.debug(
                "extender filter: %s does not fit %s: %s",
                args.describe_pod(),
                name,
                "; ".join(shortfall.describe() for shortfall in found),
            )

    def prioritize(self, args: ExtenderArgs) -> PrioritizeOutcome:
        """0..10 per candidate: the weighted scorers; unknown nodes score 0 and do not normalise."""
        if not self.state.ready:
            return _scored_zero(args, "not-ready")
        try:
            status = args.pod.get("status")
            pod = PodFacts.from_spec(
                args.pod_spec, status if isinstance(status, Mapping) else None, self.state.pod_rules
            )
        except PodSpecError as error:
            log.warning("extender prioritize: pod %s unreadable, scoring 0: %s", args.describe_pod(), error)
            return _scored_zero(args, "unreadable-pod")
        return self.scored(args, pod)
