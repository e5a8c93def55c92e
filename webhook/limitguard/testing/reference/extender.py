"""The extender's filter and prioritize worked out node by node: the oracle of extender.columnar.

Filter: each candidate's record (the scheduler's Node when it sent one, else the state's), its sums
with the ledger and the room nominated pods hold (addNominatedPods), core.fit per node. Prioritize:
one NodeFacts per candidate and core.scoring.score_candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from limitguard.core.fit import fits, shortfalls
from limitguard.core.limitaware import effective_ratios
from limitguard.core.scoring import PodFacts, score_candidates
from limitguard.core.scoring.scarce import NAME as SCARCE
from limitguard.extender.facts import NodeFactsReader
from limitguard.extender.protocol import ExtenderArgs
from limitguard.extender.service import Extender, FilterOutcome, PrioritizeOutcome
from limitguard.state.records import NodeRecord, node_record


class ReferenceExtender(Extender):
    """Extender, but every candidate judged and scored one by one over the state's dicts."""

    def _records(self, args: ExtenderArgs) -> list[tuple[str, NodeRecord | None]]:
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

    def checked(
        self,
        args: ExtenderArgs,
        limits: Mapping[str, int],
        sources: Mapping[str, str],
        reason: Callable[[list[str], str], str],
    ) -> FilterOutcome:
        limit_aware = self.config.limit_aware
        used = [(resource, amount) for resource, amount in limits.items() if amount > 0]
        priority = args.pod_spec.get("priority")
        priority = priority if type(priority) is int else 0
        pod_key = args.describe_pod()
        passed: list[str] = []
        failed: dict[str, str] = {}
        unknown = 0
        for name, record in self._records(args):
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
        return FilterOutcome(passed, failed, "checked", unknown)

    def scored(self, args: ExtenderArgs, pod: PodFacts) -> PrioritizeOutcome:
        facts = NodeFactsReader(self.state)
        with_types = any(scorer.name == SCARCE for scorer in self.extender_config.scorers)
        known = []
        unknown = 0
        for _name, record in self._records(args):
            if record is None:
                unknown += 1
                continue
            known.append(facts.facts(record, with_types=with_types))
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
