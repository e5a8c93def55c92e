"""Filter and prioritize over the cluster state: the extender's decisions, without HTTP.

Filter is the same limit-to-allocatable check as admission (real limits, ledger included), so a
node the extender lets through is one the binding webhook will accept. Prioritize weights the
configured scorers (limitguard.core.scoring). Both fail open: a node or pod we cannot judge is passed
(filter) or scored 0 (prioritize), never turned into a scheduling failure.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from limitguard.core.config import Config, Enforcement, NotReadyPolicy
from limitguard.core.fit import fits, shortfalls, source_note
from limitguard.core.limitaware import effective_ratios
from limitguard.core.podlimits import PodSpecError, pod_amounts
from limitguard.core.scoring import PodFacts, ScoreSheet, score_candidates
from limitguard.core.scoring.scarce import NAME as SCARCE
from limitguard.errors import LimitguardError
from limitguard.extender.columnar import filter_rows
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.facts import NodeFactsReader
from limitguard.extender.keptscores import KeptScores
from limitguard.extender.namelists import NameLists
from limitguard.extender.protocol import ExtenderArgs, PriorityTemplate
from limitguard.state.candidates import Candidates
from limitguard.state.records import NodeRecord, controller_of, is_mirror_pod, node_record
from limitguard.state.store import ClusterState

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


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic GC around one scoring pass.

    A pass allocates ~10 small objects per candidate (50,000 for 5,000 nodes) and no cycles; with
    150,000 pod records alive, the collections those allocations trigger would cost more than the
    scoring itself. Reference counting still frees everything as usual.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


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
        self.facts = NodeFactsReader(state)
        self._needs_types = any(scorer.name == SCARCE for scorer in extender_config.scorers)
        self.columnar = True  # on the node table; False: the reference per-node path (tests)
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

    def _prioritize_on_table(self, args: ExtenderArgs, pod: PodFacts) -> PrioritizeOutcome | None:
        table = self.state.node_table()
        candidates = table.candidates(args.node_names, args.names_key)
        names = args.node_names
        known_names = (
            names
            if not candidates.unknown
            else [name for name, k in zip(names, candidates.known.tolist(), strict=True) if k]
        )
        scored = self._kept_scores.score(table, candidates, known_names, pod)
        if scored is None:
            return None
        # A name listed twice has one row, so one score: the positions can be filled directly.
        host_json = template = None
        if not candidates.unknown:
            priorities = scored.priorities
            host_json = candidates.host_json()
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

    def _candidates(self, args: ExtenderArgs) -> list[tuple[str, NodeRecord | None]]:
        """Each candidate with its record: the scheduler's own Node object when sent, else ours."""
        if args.nodes is not None:
            pool_of = self.state.pool_of  # the scheduler's labels pick the pool
            return [
                (
                    name,
                    node_record(args.nodes[name], pool_of) if name in args.nodes else self.state.node(name),
                )
                for name in args.node_names
            ]
        return [(name, self.state.node(name)) for name in args.node_names]

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

        # The node table knows no room held for nominated pods: it answers only while none is held.
        columnar = self.columnar and args.nodes is None and not self.state.has_nominated_pods()
        if columnar and not log.isEnabledFor(logging.DEBUG):
            table = self.state.node_table()
            candidates = table.candidates(args.node_names, args.names_key)
            found = filter_rows(
                table, args.node_names, candidates, limits, limit_aware.default_ratios, reason
            )
            if found is not None:
                passed, failed, unknown, passed_key = found
                if passed_key is not None:  # kube-scheduler sends exactly these to prioritize next
                    self.name_lists.keep(passed_key, passed)
                return FilterOutcome(passed, failed, "checked", unknown)
        priority = args.pod_spec.get("priority")
        priority = priority if type(priority) is int else 0
        pod_key = args.describe_pod()
        passed: list[str] = []
        failed: dict[str, str] = {}
        unknown = 0
        for name, record in self._candidates(args):
            if record is None:
                unknown += 1
                passed.append(name)
                continue
            ratios = effective_ratios(record, limit_aware)
            allocated = self.state.allocated(name)
            held = self.state.nominated_room(name, priority, pod_key)  # as admission does
            if held:
                allocated = {r: allocated.get(r, 0) + held.get(r, 0) for r in {*allocated, *held}}
            if fits(used, record.allocatable, allocated, ratios):
                passed.append(name)
                continue
            ratio_source = record.ratio_source.describe()
            found = shortfalls(limits, record.allocatable, allocated, ratios, sources, ratio_source)
            failed[name] = reason([shortfall.resource for shortfall in found], ratio_source)
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "extender filter: %s does not fit %s: %s",
                    args.describe_pod(),
                    name,
                    "; ".join(shortfall.describe() for shortfall in found),
                )
        return FilterOutcome(passed, failed, "checked", unknown)

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
        if self.columnar and args.nodes is None:
            outcome = self._prioritize_on_table(args, pod)
            if outcome is not None:
                return outcome
        known = []
        unknown = 0
        with _collector_paused():
            for _name, record in self._candidates(args):
                if record is None:
                    unknown += 1
                    continue
                known.append(self.facts.facts(record, with_types=self._needs_types))
            sheet = score_candidates(
                pod, known, self.extender_config.scorers, self.config.limit_aware.default_ratios
            )
        scores: Mapping[str, int] = dict(zip(sheet.nodes, sheet.priorities, strict=True))
        return PrioritizeOutcome(
            list(args.node_names),
            [scores.get(name, 0) for name in args.node_names],
            unknown,
            sheet_of=lambda: sheet,
        )
