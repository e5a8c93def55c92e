"""Scoring inputs read from the cluster state (shared by the extender and `explain`)."""

from __future__ import annotations

from limitguard.core.memo import Memo, MiB
from limitguard.core.scoring import NodeFacts
from limitguard.core.scoring.scarce import resource_types
from limitguard.state.records import NodeRecord
from limitguard.state.store import ClusterState


class NodeFactsReader:
    """Builds NodeFacts from the state; node resource types are cached per allocatable map."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        # Policy: per node name, 65,536 nodes, 16 MiB, never cleared (an entry names the allocatable
        # map it was made from, and a node's new map replaces it).
        self._types: Memo[str, tuple[object, frozenset[str]]] = Memo(
            "node-resource-types", entries=65536, max_bytes=16 * MiB
        )

    def types(self, record: NodeRecord) -> frozenset[str]:
        cached = self._types.get(record.name)
        if cached is not None and cached[0] is record.allocatable:
            return cached[1]
        types = resource_types(record.allocatable)
        self._types.put(record.name, (record.allocatable, types), value_bytes=64 * (len(types) + 2))
        return types

    def facts(self, record: NodeRecord, *, with_types: bool = True) -> NodeFacts:
        state = self.state
        name = record.name
        return NodeFacts(
            name=name,
            allocatable=record.allocatable,
            ratio_override=record.ratio_override,
            limits_allocated=state.scoring_allocated(name),
            requested=state.requested(name),
            terminating=state.terminating_pods(name),
            nominated=state.nominated_pods(name),
            types=self.types(record) if with_types else frozenset(),
        )
