"""The in-memory cluster state: nodes, pods, namespaces and per-node allocated-limit sums.

Every feed (a file, the list/watch of a live cluster) goes through the same upsert/delete/replace
calls, so policy never knows where the data came from. Sums change incrementally: a pod event
touches one node in O(containers); nothing rescans pods on the request path.
Everything runs on the event loop thread, so a check and the ledger entry it makes are atomic.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from limitguard.clock import Clock
from limitguard.core.podlimits import ResourceAmounts
from limitguard.core.podrules import DEFAULT_RULES, PodRules
from limitguard.core.pools import NodePool, PoolChooser
from limitguard.state.columns import SumSources
from limitguard.state.ledger import BindingLedger
from limitguard.state.records import (
    NamespaceRecord,
    NodeRecord,
    PodRecord,
    namespace_record,
    node_record,
    pod_record,
)
from limitguard.state.table import NodeTable

KINDS = ("nodes", "pods", "namespaces")


def _key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, Mapping) else ""


class ClusterState:
    def __init__(
        self,
        ledger_ttl_seconds: float = 60.0,
        clock: Clock | None = None,
        node_pools: Sequence[NodePool] = (),
        pod_rules: PodRules = DEFAULT_RULES,
    ) -> None:
        # the pod rules of the release that applies, from whoever resolved it (limitguard.core.kuberelease):
        # every pod is counted under them, and admission and the extender judge pods under the same
        self.pod_rules = pod_rules
        # the first pool whose selector matches a node's labels: resolved into its record as it arrives
        self.pool_of = PoolChooser(node_pools)
        self._nodes: dict[str, NodeRecord] = {}
        self._pods: dict[str, PodRecord] = {}
        self._namespaces: dict[str, NamespaceRecord] = {}
        self._allocated: dict[str, ResourceAmounts] = {}
        self._scoring = _ScoringSums()
        self._nominated: dict[str, dict[str, PodRecord]] = {}  # node -> unbound pods nominated to it
        self._label_index: dict[tuple[str, str], set[str]] = {}  # (key, value) -> node names
        self.table = NodeTable()
        self.ledger = BindingLedger(ledger_ttl_seconds, clock, on_change=self.table.mark_held)
        self._sum_sources = SumSources(
            committed=self._allocated,
            held=self.ledger.totals_by_node,
            scoring=self._scoring.limits,
            requested=self._scoring.requested,
            terminating=self._scoring.terminating,
            nominated=self._scoring.nominated,
        )
        self._synced: set[str] = set()
        self._ready = False  # read on every admission: kept, not computed

    def use_pod_rules(self, rules: PodRules) -> None:
        """Count pods under another release's rules from now on (the cluster was upgraded): pods
        already counted keep their old counts until they are applied again (the feed relists them)."""
        self.pod_rules = rules

    # -- readiness --------------------------------------------------------------------------
    def mark_synced(self, kind: str, synced: bool = True) -> None:
        """A feed says a full list of *kind* has (or has no longer) been applied."""
        if synced:
            self._synced.add(kind)
        else:
            self._synced.discard(kind)
        was_ready, self._ready = self._ready, self._synced.issuperset(KINDS)
        if self._ready and not was_ready:
            # Copy every node's sums now (after a load or relist), not in the first admission that scans.
            self.node_table()

    @property
    def ready(self) -> bool:
        return self._ready

    # -- reads ------------------------------------------------------------------------------
    def node(self, name: str) -> NodeRecord | None:
        return self._nodes.get(name)

    def nodes(self) -> Iterator[NodeRecord]:
        return iter(self._nodes.values())

    def nodes_labelled(self, selector: Mapping[str, str]) -> list[NodeRecord]:
        """Nodes carrying every label of *selector* (a nodeSelector), from an index, not a scan."""
        if not selector:
            return list(self._nodes.values())
        matches = sorted(
            (self._label_index.get((key, value), set()) for key, value in selector.items()), key=len
        )
        names = set.intersection(*matches) if len(matches) > 1 else matches[0]
        return [self._nodes[name] for name in sorted(names)]

    def pod(self, namespace: str, name: str) -> PodRecord | None:
        return self._pods.get(f"{namespace}/{name}")

    def pods(self) -> Iterator[PodRecord]:
        return iter(self._pods.values())

    def namespace(self, name: str) -> NamespaceRecord | None:
        return self._namespaces.get(name)

    def namespaces(self) -> Iterator[NamespaceRecord]:
        return iter(self._namespaces.values())

    def committed(self, node: str) -> Mapping[str, int]:
        """Summed limits of the active pods the cache shows bound to *node*."""
        return self._allocated.get(node, {})

    def allocated(self, node: str) -> Mapping[str, int]:
        """Committed sums plus what the ledger holds for *node* (SPEC 2 'allocated limit')."""
        return self._with_ledger(node, self._allocated.get(node, {}))

    def _with_ledger(self, node: str, committed: Mapping[str, int]) -> Mapping[str, int]:
        held = self.ledger.held(node)
        if not held:
            return committed
        total = dict(committed)
        for resource, amount in held.items():
            total[resource] = total.get(resource, 0) + amount
        return total

    # -- scoring reads (extender, explain): non-zero defaults, never used for filtering ----------
    def requested(self, node: str) -> Mapping[str, int]:
        """Summed requests of the node's active pods, cpu/memory with the scheduler's non-zero defaults."""
        return self._scoring.requested.get(node, {})

    def scoring_allocated(self, node: str) -> Mapping[str, int]:
        """Summed limits with the non-zero defaults, plus what the ledger holds for *node*."""
        return self._with_ledger(node, self._scoring.limits.get(node, {}))

    def terminating_pods(self, node: str) -> int:
        """Active pods on *node* that carry a deletionTimestamp (PodState scoring)."""
        return self._scoring.terminating.get(node, 0)

    def nominated_pods(self, node: str) -> int:
        """Active unbound pods whose status.nominatedNodeName is *node* (PodState scoring)."""
        return self._scoring.nominated.get(node, 0)

    # -- the columnar mirror (limitguard.state.table) ---------------------------------------------
    def node_table(self) -> NodeTable:
        """The node table, current: expired ledger entries dropped, dirty rows copied."""
        self.ledger.expire()
        self.table.sync(self._sum_sources)
        return self.table

    def counts(self) -> dict[str, int]:
        return {"nodes": len(self._nodes), "pods": len(self._pods), "namespaces": len(self._namespaces)}

    # -- pods -------------------------------------------------------------------------------
    def _count(self, pod: PodRecord, sign: int) -> None:
        if not pod.active:  # a Succeeded/Failed pod counts nowhere
            return
        self._scoring.count(pod, sign)
        node, nominated = pod.node_name, pod.nominated_node
        if node:
            _add_amounts(self._allocated, node, pod.limits, sign)
            self.table.mark(node)
        if nominated:
            self.table.mark(nominated)
            if pod.limits:
                waiting = self._nominated.setdefault(nominated, {})
                if sign > 0:
                    waiting[pod.key] = pod
                else:
                    waiting.pop(pod.key, None)
                    if not waiting:
                        del self._nominated[nominated]

    def has_nominated_pods(self) -> bool:
        """Whether any unbound pod is nominated to a node (preemption under way somewhere)."""
        return bool(self._nominated)

    def nominated_room(self, node: str, priority: int, pod_key: str) -> Mapping[str, int]:
        """Limits the scheduler keeps free on *node* for nominated pods (preemptors waiting for their
        victims to leave) of *priority* or higher, other than *pod_key* - its addNominatedPods.
        A gated pod's nomination (spec.schedulingGates) holds room only from 1.37 (PodRules)."""
        room: dict[str, int] = {}
        gated_hold = self.pod_rules.gated_nominations_hold
        for key, waiting in self._nominated.get(node, {}).items():
            if key != pod_key and waiting.priority >= priority and (gated_hold or not waiting.gated):
                for resource, amount in waiting.limits.items():
                    room[resource] = room.get(resource, 0) + amount
        return room

    def nominated_holds(self, priority: int, pod_key: str) -> dict[str, Mapping[str, int]]:
        """nominated_room of every node that holds any for a pod of *priority* (a handful of nodes:
        those with preemptors waiting), by node."""
        holds = {}
        for node in self._nominated:
            room = self.nominated_room(node, priority, pod_key)
            if room:
                holds[node] = room
        return holds

    @property
    def sum_sources(self) -> SumSources:
        """The live per-node sums the node table copies (read, never written, by a request's own table)."""
        return self._sum_sources

    def upsert_pod(self, obj: Mapping[str, Any]) -> PodRecord:
        record = pod_record(obj, self.pod_rules)
        previous = self._pods.get(record.key)
        if previous == record:
            # Most watch events are status or label updates: nothing that is counted changed.
            record = previous
        else:
            if previous is not None:
                self._count(previous, -1)
            self._pods[record.key] = record
            self._count(record, +1)
        if record.node_name:
            self.ledger.seen(record.key, record.limits)
        return record

    def delete_pod(self, obj: Mapping[str, Any]) -> None:
        self.remove_pod(_key(obj))

    def remove_pod(self, key: str) -> None:
        previous = self._pods.pop(key, None)
        if previous is not None:
            self._count(previous, -1)
        self.ledger.release(key)

    def replace_pods(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Make the pod set exactly *objects* (a relist), keeping sums consistent."""
        self.replace("pods", objects)

    # -- nodes ------------------------------------------------------------------------------
    def _index_labels(self, record: NodeRecord, add: bool) -> None:
        for label in record.traits.labels.items():
            if add:
                self._label_index.setdefault(label, set()).add(record.name)
            else:
                names = self._label_index.get(label)
                if names is not None:
                    names.discard(record.name)
                    if not names:
                        del self._label_index[label]

    def upsert_node(self, obj: Mapping[str, Any]) -> NodeRecord:
        record = node_record(obj, self.pool_of)
        previous = self._nodes.get(record.name)
        if previous == record:
            # Most node events are the kubelet's status updates: nothing recorded changed, so the
            # label index, the table row and what is memoised on the node layout all stay.
            return previous
        self.remove_node(record.name, keep_row=True)
        self._nodes[record.name] = record
        self._index_labels(record, add=True)
        self.table.upsert_node(record)
        return record

    def delete_node(self, obj: Mapping[str, Any]) -> None:
        self.remove_node(_name(obj))

    def remove_node(self, name: str, *, keep_row: bool = False) -> None:
        previous = self._nodes.pop(name, None)
        if previous is not None:
            self._index_labels(previous, add=False)
        if not keep_row:
            self.table.remove_node(name)

    def replace_nodes(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.replace("nodes", objects)

    # -- namespaces -------------------------------------------------------------------------
    def upsert_namespace(self, obj: Mapping[str, Any]) -> NamespaceRecord:
        record = namespace_record(obj)
        self._namespaces[record.name] = record
        return record

    def delete_namespace(self, obj: Mapping[str, Any]) -> None:
        self._namespaces.pop(_name(obj), None)

    def replace_namespaces(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.replace("namespaces", objects)

    def upsert(self, kind: str, obj: Mapping[str, Any]) -> str:
        """Upsert an object of *kind* (nodes, pods, namespaces); returns its key."""
        if kind == "pods":
            return self.upsert_pod(obj).key
        if kind == "nodes":
            return self.upsert_node(obj).name
        return self.upsert_namespace(obj).name

    # -- full lists: what was held and not listed again goes ------------------------------------
    # A full list starts from the keys held (empty on the first load) and crosses off each one it
    # lists, rather than collecting every listed key: no 150,000-key set on the first load.
    def _held(self, kind: str) -> dict[str, Any]:
        return {"pods": self._pods, "nodes": self._nodes, "namespaces": self._namespaces}[kind]

    def keys(self, kind: str) -> set[str]:
        """The keys of every object of *kind* held now (a snapshot the caller may consume)."""
        return set(self._held(kind))

    def remove(self, kind: str, key: str) -> None:
        """Remove the object of *kind* with *key*, if held."""
        if kind == "pods":
            self.remove_pod(key)
        elif kind == "nodes":
            self.remove_node(key)
        else:
            self._namespaces.pop(key, None)

    def remove_stale(self, kind: str, stale: set[str]) -> None:
        """Remove the objects of *kind* whose keys are in *stale*, in the state's order."""
        if stale:
            for key in [key for key in self._held(kind) if key in stale]:
                self.remove(kind, key)

    def replace(self, kind: str, objects: Iterable[Mapping[str, Any]]) -> None:
        """Make the objects of *kind* exactly *objects* (a full list)."""
        stale = self.keys(kind)
        for obj in objects:
            stale.discard(self.upsert(kind, obj))
        self.remove_stale(kind, stale)


def _add_amounts(table: dict[str, ResourceAmounts], node: str, amounts: Mapping[str, int], sign: int) -> None:
    """Add (sign +1) or remove (-1) a pod's amounts from its node's sums in *table*."""
    if not amounts:
        return
    sums = table.setdefault(node, {})
    for resource, amount in amounts.items():
        sums[resource] = sums.get(resource, 0) + sign * amount


class _ScoringSums:
    """Per-node sums that only scoring reads, kept incrementally next to the limit sums."""

    __slots__ = ("limits", "nominated", "requested", "terminating")

    def __init__(self) -> None:
        self.requested: dict[str, ResourceAmounts] = {}
        self.limits: dict[str, ResourceAmounts] = {}
        self.terminating: dict[str, int] = {}
        self.nominated: dict[str, int] = {}

    @staticmethod
    def _tally(counts: dict[str, int], node: str, sign: int) -> None:
        count = counts.get(node, 0) + sign
        if count:
            counts[node] = count
        else:
            counts.pop(node, None)

    def count(self, pod: PodRecord, sign: int) -> None:
        """Count an active pod (the caller checks) in or out."""
        node = pod.node_name
        if node:
            _add_amounts(self.requested, node, pod.requests, sign)
            _add_amounts(self.limits, node, pod.scoring_limits, sign)
            if pod.terminating:
                self._tally(self.terminating, node, sign)
        if pod.nominated_node:
            self._tally(self.nominated, pod.nominated_node, sign)
