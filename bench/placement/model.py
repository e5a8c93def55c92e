"""kube-scheduler's default profile as plain functions: filter, scores, the feasible-node cap, backoff.

Each function reproduces one upstream formula with Go's integer arithmetic (int64 division truncates;
the float of BalancedAllocation is converted with int64(), which truncates too). The sources are
listed in the package docstring (bench/placement/__init__.py). Resources are cpu in millicores and
memory in bytes; the default profile scores exactly these two, weight 1 each.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limitguard.core.labelselector import LabelRequirement
from limitguard.core.quantity import to_units

MAX_NODE_SCORE = 100  # framework.MaxNodeScore
MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority
DEFAULT_MILLI_CPU_REQUEST = 100  # pkg/scheduler/util/pod_resources.go
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
MIN_FEASIBLE_NODES_TO_FIND = 100  # schedule_one.go
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
BACKOFF_WINDOW_NS = 1_000_000_000  # backoffQOrderingWindowDuration
NANOSECONDS = 1_000_000_000
HOSTNAME_SPREAD_MAX_SKEW = 3  # podtopologyspread/plugin.go systemDefaultConstraints


@dataclass(frozen=True)
class Resources:
    cpu: int = 0  # millicores
    memory: int = 0  # bytes

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory)


# -- what the scheduler reads from a pod ---------------------------------------------------------
def pod_requests(pod: Mapping[str, Any]) -> tuple[Resources, Resources]:
    """(requests, non-zero requests) of a pod's regular containers: the second counts a container
    that names no cpu (memory) request as 100m (200Mi), an explicit 0 stays 0 (PodRequests with
    NonMissingContainerRequests). Init containers and overhead are not modelled."""
    actual = non_zero = Resources()
    for container in pod.get("spec", {}).get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu = to_units("cpu", requests["cpu"]) if "cpu" in requests else None
        memory = to_units("memory", requests["memory"]) if "memory" in requests else None
        actual += Resources(cpu or 0, memory or 0)
        non_zero += Resources(
            DEFAULT_MILLI_CPU_REQUEST if cpu is None else cpu,
            DEFAULT_MEMORY_REQUEST if memory is None else memory,
        )
    return actual, non_zero


SET_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


@dataclass(frozen=True)
class Requirement:
    """One matchExpressions entry of a node selector term: the label selector's four operators
    (limitguard.core.labelselector, as k8s.io/apimachinery matches them) plus the node selector's
    Gt and Lt (k8s.io/component-helpers nodeaffinity)."""

    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator in SET_OPERATORS:
            return LabelRequirement(self.key, self.operator, self.values).matches(labels)
        value = labels.get(self.key)
        if self.operator in ("Gt", "Lt") and value is not None and len(self.values) == 1:
            node, wanted = parse_int64(value), parse_int64(next(iter(self.values)))
            if node is None or wanted is None:
                return False
            return node > wanted if self.operator == "Gt" else node < wanted
        return False


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: str | None) -> int | None:
    """strconv.ParseInt(text, 10, 64), as Requirement.Matches parses a Gt/Lt label and value
    (k8s.io/apimachinery pkg/labels/selector.go): a sign, decimal digits, within int64; None when not."""
    if text is None:
        return None
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None


PreferredTerm = tuple[int, tuple[Requirement, ...]]  # (weight, requirements ANDed)


def preferred_terms(pod: Mapping[str, Any]) -> tuple[PreferredTerm, ...]:
    """The pod's preferredDuringSchedulingIgnoredDuringExecution node-affinity terms; a term of
    weight 0 or without requirements is skipped, as the nodeaffinity helper does."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = []
    for term in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        weight = int(term.get("weight") or 0)
        expressions = (term.get("preference") or {}).get("matchExpressions") or []
        requirements = tuple(
            Requirement(e["key"], e["operator"], frozenset(e.get("values") or ())) for e in expressions
        )
        if weight and requirements:
            terms.append((weight, requirements))
    return tuple(terms)


# -- Filter: NodeResourcesFit ----------------------------------------------------------------------
def fits_requests(
    pod: Resources, allocatable: Resources, requested: Resources, pods_on_node: int, allowed_pods: int
) -> bool:
    """NodeResourcesFit Filter (fitsRequest): the pod count, then each resource the pod requests."""
    if pods_on_node + 1 > allowed_pods:
        return False
    if pod.cpu > 0 and pod.cpu > allocatable.cpu - requested.cpu:
        return False
    return not (pod.memory > 0 and pod.memory > allocatable.memory - requested.memory)


# -- Score -----------------------------------------------------------------------------------------
def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_allocated(requested: Resources, allocatable: Resources) -> int:
    """NodeResourcesFit, LeastAllocated, cpu and memory weight 1: *requested* is the node's
    non-zero requests plus the pod's. A resource with allocatable 0 is left out."""
    total = weights = 0
    for used, capacity in ((requested.cpu, allocatable.cpu), (requested.memory, allocatable.memory)):
        if capacity:
            total += least_requested_score(used, capacity)
            weights += 1
    return total // weights if weights else 0


def balance(requested: Resources, allocatable: Resources) -> int:
    """(1 - std of the requested fractions, each capped at 1) x 100; with two resources
    std = |f1 - f2| / 2, with one it is 0."""
    fractions = [
        min(1.0, used / capacity)
        for used, capacity in ((requested.cpu, allocatable.cpu), (requested.memory, allocatable.memory))
        if capacity
    ]
    std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_allocation(node_requested: Resources, pod: Resources, allocatable: Resources) -> int:
    """NodeResourcesBalancedAllocation from 1.36: the change of balance the pod makes, mapped to
    50..100 (75: no change). Actual requests, no non-zero defaults; the caller skips the plugin for
    a pod requesting nothing (PreScore answers Skip)."""
    with_pod = balance(node_requested + pod, allocatable)
    without_pod = balance(node_requested, allocatable)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


def node_affinity(terms: Sequence[PreferredTerm], labels: Mapping[str, str]) -> int:
    """NodeAffinity Score: the summed weights of the preferred terms the node matches."""
    return sum(weight for weight, requirements in terms if all(r.matches(labels) for r in requirements))


def tolerates(toleration: Mapping[str, str], taint: Mapping[str, str]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    if toleration.get("operator") == "Exists":
        return True
    return toleration.get("value", "") == taint.get("value", "")


def taint_toleration(taints: Iterable[Mapping[str, str]], tolerations: Sequence[Mapping[str, str]]) -> int:
    """TaintToleration Score: PreferNoSchedule taints the pod does not tolerate (reversed later)."""
    return sum(
        1
        for taint in taints
        if taint.get("effect") == "PreferNoSchedule" and not any(tolerates(t, taint) for t in tolerations)
    )


def default_normalize(scores: Sequence[int], reverse: bool = False) -> list[int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    highest = max(scores, default=0)
    if highest == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    scaled = [MAX_NODE_SCORE * score // highest for score in scores]
    return [MAX_NODE_SCORE - score for score in scaled] if reverse else scaled


def go_round(value: float) -> int:
    """math.Round for a value >= 0: halves away from zero (Python's round() goes to even)."""
    floor = math.floor(value)
    return floor + (1 if value - floor >= 0.5 else 0)


def hostname_spread(workload_pods: int, candidates: int, max_skew: int = HOSTNAME_SPREAD_MAX_SKEW) -> int:
    """PodTopologySpread Score under the system default constraints on a node without a zone label
    (only the hostname constraint applies): round(pods of the workload on the node x
    ln(candidates + 2) + maxSkew - 1)."""
    return go_round(workload_pods * math.log(candidates + 2) + (max_skew - 1))


def spread_normalize(scores: Sequence[int]) -> list[int]:
    """PodTopologySpread NormalizeScore: 100 x (highest + lowest - score) / highest; all 100 when
    the highest is 0."""
    highest, lowest = max(scores, default=0), min(scores, default=0)
    if highest == 0:
        return [MAX_NODE_SCORE for _ in scores]
    return [MAX_NODE_SCORE * (highest + lowest - score) // highest for score in scores]


def extender_score(score: int, weight: int) -> int:
    """What an extender's 0..10 adds to a node's total (prioritizeNodes)."""
    return score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)


def select_host(names: Sequence[str], totals: Sequence[int], rng: random.Random) -> str:
    """selectHost: the highest total; ties are broken uniformly at random (reservoir sampling)."""
    best = max(totals)
    return rng.choice([name for name, total in zip(names, totals, strict=True) if total == best])


# -- the feasible-node cap -------------------------------------------------------------------------
def num_feasible_nodes_to_find(all_nodes: int, percentage: int = 0) -> int:
    """numFeasibleNodesToFind: every node below 100; else percentageOfNodesToScore of them (0, the
    default: adaptive 50 - nodes/125, at least 5) and at least 100."""
    if all_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return all_nodes
    if percentage <= 0:
        percentage = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - all_nodes // 125)
    return max(MIN_FEASIBLE_NODES_TO_FIND, all_nodes * percentage // 100)


def feasible_window(
    count: int, fits: Callable[[int], bool], start: int, to_find: int
) -> tuple[list[int], int]:
    """The nodes findNodesThatPassFilters keeps: of *count* nodes, checked in order from *start*
    (wrapping) until *to_find* fit; and how many it processed, by which nextStartNodeIndex then
    advances. (Upstream checks in parallel and may look at a few more; this is its sequential
    intent.)"""
    found: list[int] = []
    for offset in range(count):
        index = (start + offset) % count
        if fits(index):
            found.append(index)
            if len(found) == to_find:
                return found, offset + 1
    return found, count


# -- the error backoff -----------------------------------------------------------------------------
def backoff_duration_ns(count: int, initial_ns: int = NANOSECONDS, maximum_ns: int = 10 * NANOSECONDS) -> int:
    """calculateBackoffDuration: initial x 2^(count-1), at most the maximum; 0 before any attempt."""
    if count == 0:
        return 0
    shift = count - 1
    if initial_ns > maximum_ns >> shift:
        return maximum_ns
    return initial_ns << shift


def backoff_expiry_ns(failed_at_ns: int, count: int) -> int:
    """getBackoffTime: the failure time plus the duration, truncated to the 1 s ordering window."""
    expiry = failed_at_ns + backoff_duration_ns(count)
    return expiry - expiry % BACKOFF_WINDOW_NS


def backoff_completed(expiry_ns: int, now_ns: int) -> bool:
    """Not isEntityBackingoff: the expiry lies in a window before the current one. The queue is
    flushed once per window, at its start."""
    return expiry_ns < now_ns - now_ns % BACKOFF_WINDOW_NS
