"""The scheduler's nodes as arrays: the same filter, scores and choice as scheduler.py, per attempt
over 1,000 nodes in a fraction of the time a loop of the scalar functions takes on this machine.

The scalar functions (model.py, scheduler.totals) are the reference; the unit tests check that
these answers equal theirs node for node (integer arithmetic alike; BalancedAllocation's float
steps are the same IEEE operations in the same order).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import numpy as np

from bench.placement import model
from bench.placement.scheduler import NodeState, PodState

HALF = model.MAX_NODE_SCORE // 2


def _pairs(values: Sequence[model.Resources]) -> np.ndarray:
    return np.array([[v.cpu, v.memory] for v in values], dtype=np.int64).reshape(-1, 2)


class Columns:
    """Every node's allocatable, limit capacity, requests (actual and non-zero), limits and pod
    count, in snapshot order, with where the next search starts."""

    def __init__(self, nodes: Sequence[NodeState], percentage_of_nodes_to_score: int = 0) -> None:
        self.nodes = list(nodes)
        self.names = [node.name for node in self.nodes]
        self.index = {name: i for i, name in enumerate(self.names)}
        self.allocatable = _pairs([n.allocatable for n in self.nodes])
        self.limit_capacity = _pairs([n.limit_capacity for n in self.nodes])
        self.requested = _pairs([n.requested for n in self.nodes])
        self.non_zero = _pairs([n.non_zero_requested for n in self.nodes])
        self.limits = _pairs([n.limits for n in self.nodes])
        self.pods = np.array([n.pods for n in self.nodes], dtype=np.int64)
        self.workload = np.array([n.workload_pods for n in self.nodes], dtype=np.int64)
        self.allowed = np.array([n.allowed_pods for n in self.nodes], dtype=np.int64)
        self.percentage = percentage_of_nodes_to_score
        self.next_start = 0
        # Node labels and taints change while pods wait (limitguard's room labels, its taint): the
        # per-pod caches are kept per version of them; Gt/Lt requirements and untolerated
        # PreferNoSchedule taints of pods without tolerations are read from columns instead.
        self.layout = 0
        self._affinity: dict[int, tuple[int, np.ndarray]] = {}  # id(pod) -> (layout, raw per node)
        self._taints: dict[int, tuple[int, np.ndarray]] = {}
        self._numeric: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # label key -> (values, present)
        self._prefer_no_schedule = np.array(
            [model.taint_toleration(n.taints, ()) for n in self.nodes], dtype=np.int64
        )

    def set_node(self, index: int, labels: dict[str, str], taints: tuple[dict[str, str], ...]) -> None:
        """Node *index* now carries *labels* and *taints* (the scheduler's informer saw it change)."""
        node = self.nodes[index]
        node.labels, node.taints = labels, taints
        self._prefer_no_schedule[index] = model.taint_toleration(taints, ())
        for key, (values, present) in self._numeric.items():
            parsed = model.parse_int64(labels.get(key))
            present[index] = parsed is not None
            values[index] = parsed or 0
        self.layout += 1

    def add_node(self, node: NodeState) -> int:
        """A node added to the cluster (autoscaling): every column gets its row; returns its index."""
        index = len(self.nodes)
        self.nodes.append(node)
        self.names.append(node.name)
        self.index[node.name] = index
        self.allocatable = np.vstack([self.allocatable, _pairs([node.allocatable])])
        self.limit_capacity = np.vstack([self.limit_capacity, _pairs([node.limit_capacity])])
        self.requested = np.vstack([self.requested, _pairs([node.requested])])
        self.non_zero = np.vstack([self.non_zero, _pairs([node.non_zero_requested])])
        self.limits = np.vstack([self.limits, _pairs([node.limits])])
        self.pods = np.append(self.pods, node.pods)
        self.workload = np.append(self.workload, node.workload_pods)
        self.allowed = np.append(self.allowed, node.allowed_pods)
        self._prefer_no_schedule = np.append(self._prefer_no_schedule, 0)
        self._numeric = {
            key: (np.append(values, 0), np.append(present, False))
            for key, (values, present) in self._numeric.items()
        }
        self.set_node(index, node.labels, node.taints)
        return index

    def add(self, index: int, pod: PodState, sign: int = 1) -> None:
        """Count *pod* on node *index* (sign -1: forget it again)."""
        self.requested[index] += sign * np.array([pod.requests.cpu, pod.requests.memory])
        self.non_zero[index] += sign * np.array([pod.non_zero.cpu, pod.non_zero.memory])
        self.limits[index] += sign * np.array([pod.limits.cpu, pod.limits.memory])
        self.pods[index] += sign
        self.workload[index] += sign * pod.workload

    def fits(self, pod: PodState) -> np.ndarray:
        """NodeResourcesFit Filter on every node."""
        free = self.allocatable - self.requested
        mask = self.pods + 1 <= self.allowed
        if pod.requests.cpu > 0:
            mask &= pod.requests.cpu <= free[:, 0]
        if pod.requests.memory > 0:
            mask &= pod.requests.memory <= free[:, 1]
        return mask

    def feasible(self, pod: PodState) -> np.ndarray:
        """The indices the search keeps from the rotating start, up to the feasible-node cap."""
        count = len(self.names)
        to_find = model.num_feasible_nodes_to_find(count, self.percentage)
        order = (self.next_start + np.arange(count)) % count
        hits = np.flatnonzero(self.fits(pod)[order])
        processed = int(hits[to_find - 1]) + 1 if len(hits) >= to_find else count
        self.next_start = (self.next_start + processed) % count
        return order[hits[:to_find]]

    def _raw(self, cache: dict[int, tuple[int, np.ndarray]], pod: PodState, score: object) -> np.ndarray:
        kept = cache.get(id(pod))
        if kept is None or kept[0] != self.layout:
            kept = cache[id(pod)] = (self.layout, np.array([score(n) for n in self.nodes], dtype=np.int64))  # type: ignore[operator]
        return kept[1]

    def _numeric_column(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        column = self._numeric.get(key)
        if column is None:
            parsed = [model.parse_int64(node.labels.get(key)) for node in self.nodes]
            column = self._numeric[key] = (
                np.array([value or 0 for value in parsed], dtype=np.int64),
                np.array([value is not None for value in parsed], dtype=bool),
            )
        return column

    def _affinity_raw(self, pod: PodState) -> np.ndarray:
        """model.node_affinity per node: from the numeric label columns when every requirement is
        Gt or Lt (limitguard's hint), else per node (kept until a node's labels change)."""
        if not all(r.operator in ("Gt", "Lt") for _, requirements in pod.terms for r in requirements):
            return self._raw(self._affinity, pod, lambda n: model.node_affinity(pod.terms, n.labels))
        total = np.zeros(len(self.nodes), dtype=np.int64)
        for weight, requirements in pod.terms:
            matched = np.ones(len(self.nodes), dtype=bool)
            for requirement in requirements:
                (text,) = requirement.values if len(requirement.values) == 1 else (None,)
                wanted = model.parse_int64(text)
                if wanted is None:
                    matched[:] = False
                    continue
                values, present = self._numeric_column(requirement.key)
                matched &= present & (values > wanted if requirement.operator == "Gt" else values < wanted)
            total += weight * matched
        return total

    def _taints_raw(self, pod: PodState) -> np.ndarray:
        if not pod.tolerations:
            return self._prefer_no_schedule
        return self._raw(self._taints, pod, lambda n: model.taint_toleration(n.taints, pod.tolerations))

    def totals(
        self,
        pod: PodState,
        candidates: np.ndarray,
        weights: Mapping[str, int],
        extender: Mapping[str, int] | None = None,
        extender_weight: int = 1,
    ) -> np.ndarray:
        """scheduler.totals for the *candidates* (node indices)."""
        allocatable = self.allocatable[candidates]
        present = allocatable != 0
        used = self.non_zero[candidates] + np.array([pod.non_zero.cpu, pod.non_zero.memory])
        free_score = np.where(
            present & (used <= allocatable),
            (allocatable - used) * model.MAX_NODE_SCORE // np.where(present, allocatable, 1),
            0,
        )
        counted = present.sum(axis=1)
        fit = np.where(counted > 0, free_score.sum(axis=1) // np.maximum(counted, 1), 0)
        total = weights["NodeResourcesFit"] * fit
        if not pod.best_effort:
            before = self.requested[candidates]
            after = before + np.array([pod.requests.cpu, pod.requests.memory])
            change = HALF + (HALF + _balance(after, allocatable) - _balance(before, allocatable)) // 2
            total = total + weights["NodeResourcesBalancedAllocation"] * change
        if pod.terms:
            raw = self._affinity_raw(pod)
            total = total + weights["NodeAffinity"] * _normalize(raw[candidates], reverse=False)
        raw = self._taints_raw(pod)
        total = total + weights["TaintToleration"] * _normalize(raw[candidates], reverse=True)
        if pod.workload:
            total = total + weights["PodTopologySpread"] * _spread(self.workload[candidates])
        if extender:
            scores = np.array([extender.get(self.names[i], 0) for i in candidates], dtype=np.int64)
            total = total + scores * extender_weight * (model.MAX_NODE_SCORE // model.MAX_EXTENDER_PRIORITY)
        return total

    def choose(
        self,
        pod: PodState,
        candidates: np.ndarray,
        weights: Mapping[str, int],
        rng: random.Random,
        extender: Mapping[str, int] | None = None,
    ) -> int:
        """scheduler.choose: alone unscored, else the best total with ties drawn from *rng*."""
        if len(candidates) == 1:
            return int(candidates[0])
        total = self.totals(pod, candidates, weights, extender)
        best = [int(i) for i in candidates[total == total.max()]]
        return rng.choice(best)

    def forget(self, pod: PodState) -> None:
        """Drop the per-pod caches once the pod is placed."""
        self._affinity.pop(id(pod), None)
        self._taints.pop(id(pod), None)

    def stranded(self, pending: Sequence[PodState]) -> int:
        """scheduler.stranded on the current columns."""
        room = self.limit_capacity - self.limits
        count = 0
        for pod in pending:
            ok = self.fits(pod)
            for column, limit in enumerate((pod.limits.cpu, pod.limits.memory)):
                if limit:
                    ok &= limit <= room[:, column]
            count += bool(ok.any())
        return count


def _balance(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
    """model.balance per row: the capped fractions of the resources with allocatable > 0."""
    present = allocatable != 0
    fractions = np.minimum(1.0, requested / np.where(present, allocatable, 1))
    both = present.all(axis=1)
    std = np.where(both, np.abs(fractions[:, 0] - fractions[:, 1]) / 2, 0.0)
    return ((1 - std) * model.MAX_NODE_SCORE).astype(np.int64)


def _spread(workload_pods: np.ndarray) -> np.ndarray:
    """model.hostname_spread then model.spread_normalize over the candidates."""
    raw = workload_pods * math.log(len(workload_pods) + 2) + (model.HOSTNAME_SPREAD_MAX_SKEW - 1)
    floor = np.floor(raw)
    rounded = floor.astype(np.int64) + (raw - floor >= 0.5)
    highest, lowest = int(rounded.max()), int(rounded.min())
    if highest == 0:
        return np.full(len(rounded), model.MAX_NODE_SCORE, dtype=np.int64)
    return model.MAX_NODE_SCORE * (highest + lowest - rounded) // highest


def _normalize(raw: np.ndarray, reverse: bool) -> np.ndarray:
    """model.default_normalize over the candidates."""
    highest = int(raw.max()) if len(raw) else 0
    if highest == 0:
        return np.full(len(raw), model.MAX_NODE_SCORE if reverse else 0, dtype=np.int64)
    scaled = model.MAX_NODE_SCORE * raw // highest
    return model.MAX_NODE_SCORE - scaled if reverse else scaled
