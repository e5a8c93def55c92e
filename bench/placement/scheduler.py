"""The modelled scheduler's state: nodes as its cache sees them, pods, the queue, one cycle's parts.

No I/O and no clock: times come in as arguments (nanoseconds), randomness from a seeded Random.
Cluster, totals, choose and stranded are the per-node reference; the driver (run.py) uses the same
steps over arrays (columns.py), which the unit tests hold equal to these.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.placement import model
from bench.placement.model import Resources
from limitguard.core.quantity import to_units
from limitguard.schedcfg.tables.plugin_tables import default_plugins
from limitguard.schedcfg.tables.releases import Release


def profile_weights(release: Release | None = None) -> dict[str, int]:
    """Score plugin -> weight in the default profile of *release* (default_plugins.go, from
    limitguard's own table of it)."""
    return {
        str(plugin["name"]): int(plugin["weight"])  # type: ignore[call-overload]
        for plugin in default_plugins(release or Release())
        if "weight" in plugin
    }


@dataclass
class NodeState:
    """A node in the scheduler's cache (requests, assumed pods included) and, for the stranded
    count, its limit capacity (allocatable x ratio) and the limits of the pods bound to it."""

    name: str
    labels: dict[str, str]
    allocatable: Resources
    limit_capacity: Resources
    allowed_pods: int = 110
    taints: tuple[dict[str, str], ...] = ()
    requested: Resources = field(default_factory=Resources)
    non_zero_requested: Resources = field(default_factory=Resources)
    limits: Resources = field(default_factory=Resources)
    pods: int = 0
    workload_pods: int = 0  # of the bench's ReplicaSet, when its pods have one

    def add(self, pod: PodState, sign: int = 1) -> None:
        """Count *pod* on this node (sign -1: take it off again, as the cache forgets a pod)."""
        self.requested += Resources(sign * pod.requests.cpu, sign * pod.requests.memory)
        self.non_zero_requested += Resources(sign * pod.non_zero.cpu, sign * pod.non_zero.memory)
        self.limits += Resources(sign * pod.limits.cpu, sign * pod.limits.memory)
        self.pods += sign
        self.workload_pods += sign * pod.workload

    def fits(self, pod: PodState) -> bool:
        return model.fits_requests(
            pod.requests, self.allocatable, self.requested, self.pods, self.allowed_pods
        )

    def has_limit_room(self, pod: PodState) -> bool:
        """limitguard's rule for a pod whose limits are its containers' (no init containers)."""
        room = self.limit_capacity - self.limits
        return (not pod.limits.cpu or pod.limits.cpu <= room.cpu) and (
            not pod.limits.memory or pod.limits.memory <= room.memory
        )


def pod_limits(pod: Mapping[str, Any]) -> Resources:
    """Limit, else request, summed over the regular containers."""
    total = Resources()
    for container in pod.get("spec", {}).get("containers") or []:
        resources = container.get("resources") or {}
        values = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
        total += Resources(
            to_units("cpu", values["cpu"]) if "cpu" in values else 0,
            to_units("memory", values["memory"]) if "memory" in values else 0,
        )
    return total


@dataclass
class PodState:
    """A pod as the queue holds it (QueuedPodInfo) plus what the bench measures about it."""

    key: str
    body: dict[str, Any]
    created_ns: int
    priority: int = 0
    timestamp_ns: int = 0
    attempts: int = 0
    consecutive_errors: int = 0
    unschedulable_count: int = 0
    expiry_ns: int = 0
    denied: int = 0
    node: str | None = None
    placed_ns: int | None = None
    requests: Resources = field(init=False)
    non_zero: Resources = field(init=False)
    limits: Resources = field(init=False)
    terms: tuple[model.PreferredTerm, ...] = field(init=False)
    tolerations: tuple[dict[str, str], ...] = field(init=False)
    workload: bool = field(init=False)

    def __post_init__(self) -> None:
        self.requests, self.non_zero = model.pod_requests(self.body)
        self.limits = pod_limits(self.body)
        self.terms = model.preferred_terms(self.body)
        self.tolerations = tuple(self.body.get("spec", {}).get("tolerations") or ())
        self.workload = any(
            owner.get("kind") == "ReplicaSet" and owner.get("controller")
            for owner in self.body.get("metadata", {}).get("ownerReferences") or ()
        )

    @property
    def best_effort(self) -> bool:
        return self.requests.cpu == 0 and self.requests.memory == 0


class SchedulingQueue:
    """activeQ (PrioritySort: priority, then the time the pod entered the queue) and the error
    backoff queue, flushed once per 1 s window (backoff_queue.go, scheduling_queue.go)."""

    def __init__(self) -> None:
        self._active: list[tuple[int, int, int, PodState]] = []
        self._backoff: list[tuple[int, int, PodState]] = []
        self._sequence = 0

    def add(self, pod: PodState, now_ns: int) -> None:
        pod.timestamp_ns = now_ns
        self._push(pod)

    def _push(self, pod: PodState) -> None:
        self._sequence += 1
        heapq.heappush(self._active, (-pod.priority, pod.timestamp_ns, self._sequence, pod))

    def failed(self, pod: PodState, now_ns: int, error: bool) -> None:
        """Requeue after a failed attempt: an error (a denied binding) counts consecutive errors,
        which then decide the backoff; "no node fits" counts unschedulable attempts."""
        if error:
            pod.consecutive_errors += 1
        else:
            pod.consecutive_errors = 0
            pod.unschedulable_count += 1
        count = pod.consecutive_errors or pod.unschedulable_count
        pod.timestamp_ns = now_ns
        pod.expiry_ns = model.backoff_expiry_ns(now_ns, count)
        if model.backoff_completed(pod.expiry_ns, now_ns):
            self._push(pod)
        else:
            self._sequence += 1
            heapq.heappush(self._backoff, (pod.expiry_ns, self._sequence, pod))

    def flush(self, now_ns: int) -> int:
        """Move every pod whose backoff completed to activeQ; how many moved."""
        moved = 0
        while self._backoff and model.backoff_completed(self._backoff[0][0], now_ns):
            self._push(heapq.heappop(self._backoff)[2])
            moved += 1
        return moved

    def pop(self) -> PodState | None:
        return heapq.heappop(self._active)[3] if self._active else None

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff)


@dataclass
class Cluster:
    """The scheduler's node list in its snapshot order, and where the next search starts."""

    nodes: list[NodeState]
    percentage_of_nodes_to_score: int = 0
    next_start: int = 0

    def feasible(self, pod: PodState) -> list[NodeState]:
        """Filter (NodeResourcesFit) up to the feasible-node cap from the rotating start."""
        nodes = self.nodes
        to_find = model.num_feasible_nodes_to_find(len(nodes), self.percentage_of_nodes_to_score)
        found, processed = model.feasible_window(
            len(nodes), lambda i: nodes[i].fits(pod), self.next_start, to_find
        )
        self.next_start = (self.next_start + processed) % len(nodes)
        return [nodes[index] for index in found]


def totals(
    pod: PodState,
    candidates: Sequence[NodeState],
    weights: Mapping[str, int],
    extender: Mapping[str, int] | None = None,
    extender_weight: int = 1,
) -> list[int]:
    """Each candidate's weighted sum. PodTopologySpread counts only for the pods of a ReplicaSet
    (the system default constraints; the nodes have no zone label, so only the hostname one);
    InterPodAffinity and ImageLocality add the same to every node here (no pod affinity, no images
    in node status), so they are left out."""
    fit = [model.least_allocated(n.non_zero_requested + pod.non_zero, n.allocatable) for n in candidates]
    balanced = (
        [0] * len(candidates)
        if pod.best_effort
        else [model.balanced_allocation(n.requested, pod.requests, n.allocatable) for n in candidates]
    )
    affinity = (
        model.default_normalize([model.node_affinity(pod.terms, n.labels) for n in candidates])
        if pod.terms
        else [0] * len(candidates)
    )
    taints = model.default_normalize(
        [model.taint_toleration(n.taints, pod.tolerations) for n in candidates], reverse=True
    )
    spread = (
        model.spread_normalize([model.hostname_spread(n.workload_pods, len(candidates)) for n in candidates])
        if pod.workload
        else [0] * len(candidates)
    )
    extended = [model.extender_score((extender or {}).get(n.name, 0), extender_weight) for n in candidates]
    return [
        weights["NodeResourcesFit"] * f
        + weights["NodeResourcesBalancedAllocation"] * b
        + weights["NodeAffinity"] * a
        + weights["TaintToleration"] * t
        + weights["PodTopologySpread"] * p
        + e
        for f, b, a, t, p, e in zip(fit, balanced, affinity, taints, spread, extended, strict=True)
    ]


def choose(
    pod: PodState,
    candidates: Sequence[NodeState],
    weights: Mapping[str, int],
    rng: random.Random,
    extender: Mapping[str, int] | None = None,
) -> NodeState:
    """One feasible node is taken unscored (schedulePod); else the best total, ties at random."""
    if len(candidates) == 1:
        return candidates[0]
    scores = totals(pod, candidates, weights, extender)
    name = model.select_host([n.name for n in candidates], scores, rng)
    return next(n for n in candidates if n.name == name)


def stranded(pending: Sequence[PodState], nodes: Sequence[NodeState]) -> int:
    """Pending pods for which some node has room for both their requests and their limits."""
    return sum(1 for pod in pending if any(n.fits(pod) and n.has_limit_room(pod) for n in nodes))
