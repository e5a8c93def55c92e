"""Bindings approved but not yet seen bound.

The cache lags the apiserver, so two bindings approved back to back for one node would both see
the old sum. Each approved binding is held here, counted toward its node, until the cache shows the
pod bound, the apiserver is known never to have written it, or the TTL expires. The ledger is per
process; with several replicas only the elected leader decides (and records) ledger requests, the
others forward them (docs/replicas.md).

An approval is not a write: a later webhook, a quota or a forged review means the apiserver never
persists the object. Once it can no longer do so (the write horizon after the answer: validating
webhooks run in parallel, so a write may land up to the slowest one's timeout later), the live feed
reads the apiserver's current resourceVersion and stamps the entry with it (`fence`); when the pod
watch has applied that version without showing the pod bound, the entry goes (`release_unwritten`).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from limitguard.clock import Clock, SystemClock
from limitguard.core.podlimits import ResourceAmounts

# The address of the client whose review is being answered (set by the HTTP edge for each request),
# so an entry that is later found never written can name who sent it.
CALLER: ContextVar[str] = ContextVar("limitguard_caller", default="")


@dataclass(slots=True)
class _Entry:
    node: str
    limits: Mapping[str, int]
    expires_at: float
    # A resize hold: released once the cache counts the pod at these limits (None: a binding,
    # released once the cache shows the pod bound).
    settles_at: Mapping[str, int] | None = None
    reserved_at: float = 0.0
    caller: str = ""
    # The apiserver's resourceVersion read after the write horizon had passed (None: not read yet).
    fence: int | None = None
    fenced_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Unwritten:
    """An entry released because the apiserver never wrote what it held room for."""

    pod_key: str
    node: str
    limits: Mapping[str, int]
    caller: str
    resize: bool


class BindingLedger:
    def __init__(
        self,
        ttl_seconds: float,
        clock: Clock | None = None,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self._ttl = ttl_seconds
        self._on_change = on_change  # told the node whose totals changed (the columnar table)
        self._clock = clock or SystemClock()
        self._caught_up_at: float | None = None  # None: no live feed, entries expire by the clock alone
        # pod key -> entry, oldest first. An OrderedDict, not a dict: a dict leaves a dead slot at
        # its front for every entry released or re-reserved, and iterating from the front (expire,
        # on every check) walks all of them until the next resize - thousands of cache misses a call.
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._entry_counts: dict[str, int] = {}  # node -> entries holding on it
        self._totals: dict[str, ResourceAmounts] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def reserve(
        self, node: str, pod_key: str, limits: Mapping[str, int], settles_at: Mapping[str, int] | None = None
    ) -> None:
        """Hold *limits* on *node* for *pod_key*: an approved binding, or (with *settles_at*, the
        pod's new effective limits) the growth of an approved resize of a pod already counted.

        The maps are kept, not copied: callers pass maps nobody changes afterwards (a pod record's
        limits, or ones built for this call)."""
        entries = self._entries
        now = self._clock.now()
        entry = _Entry(node, limits, now + self._ttl, settles_at, now, CALLER.get())
        held = entries.get(pod_key)
        if held is not None:
            if held.node == node and held.limits == limits and held.settles_at == settles_at:
                # The same hold again (a retried binding): a new entry, last in expiry order; the
                # node's totals, and so the node table's row, stay as they are.
                entries[pod_key] = entry
                entries.move_to_end(pod_key)
                return
            self.release(pod_key)
        entries[pod_key] = entry
        count = self._entry_counts.get(node, 0)
        self._entry_counts[node] = count + 1
        totals = self._totals[node] if count else self._totals.setdefault(node, {})
        for resource, amount in limits.items():
            totals[resource] = totals.get(resource, 0) + amount
        if self._on_change is not None:
            self._on_change(node)

    def release(self, pod_key: str) -> None:
        entry = self._entries.pop(pod_key, None)
        if entry is None:
            return
        node = entry.node
        left = self._entry_counts[node] - 1
        if left:
            self._entry_counts[node] = left
            totals = self._totals[node]
            for resource, amount in entry.limits.items():
                totals[resource] -= amount
        else:
            del self._entry_counts[node]
            del self._totals[node]
        if self._on_change is not None:
            self._on_change(node)

    def holding(self, pod_key: str, node: str) -> Mapping[str, int]:
        """What the ledger holds for *pod_key* on *node* ({} when nothing, or held on another node).

        A review for a pod the ledger already holds on the same node is the same binding sent
        again (kube-scheduler retries bindings on transient errors): its own entry is not "others".
        """
        entry = self._entries.get(pod_key)
        return entry.limits if entry is not None and entry.node == node else {}

    def held_by(self, pod_key: str) -> Mapping[str, int]:
        """What the ledger holds for one pod (its resize growth, or its binding)."""
        entry = self._entries.get(pod_key)
        return entry.limits if entry is not None else {}

    def seen(self, pod_key: str, counted: Mapping[str, int]) -> None:
        """The cache shows *pod_key* bound and counts *counted* for it: a binding hold is done; a
        resize hold is done once the counted limits reach the resize's."""
        entry = self._entries.get(pod_key)
        if entry is None:
            return
        target = entry.settles_at
        if target is None or all(counted.get(r, 0) >= amount for r, amount in target.items()):
            self.release(pod_key)

    def held(self, node: str) -> Mapping[str, int]:
        """What approved-but-unseen bindings hold on *node*, after dropping expired entries."""
        if not self._entries:
            return {}
        self.expire()
        return self._totals.get(node, {})

    def totals(self, node: str) -> Mapping[str, int]:
        """What the ledger holds on *node* right now, without expiring anything."""
        return self._totals.get(node, {})

    @property
    def totals_by_node(self) -> Mapping[str, Mapping[str, int]]:
        """Every node's total, live (the node table copies from it): read only."""
        return self._totals

    def caught_up(self) -> None:
        """The pod feed has applied everything the apiserver sent until now.

        An entry may only expire once the cache has been current past its expiry: while the watch
        is down, a binding that succeeded is invisible, and dropping its entry would over-admit.
        """
        self._caught_up_at = self._clock.now()

    def expire(self) -> int:
        """Drop every expired entry; returns how many.

        The TTL is the same for all, so insertion order is expiry order (reserve re-inserts):
        only the oldest entries are ever looked at, and a check costs O(1) when nothing expired.
        """
        if not self._entries:
            return 0
        now = self._clock.now() if self._caught_up_at is None else min(self._clock.now(), self._caught_up_at)
        if next(iter(self._entries.values())).expires_at > now:
            return 0  # the usual case: the oldest entry is still current
        expired = 0
        for entry in self._entries.values():
            if entry.expires_at > now:
                break
            expired += 1
        for key in list(itertools.islice(self._entries, expired)):
            self.release(key)
        return expired

    # -- entries the apiserver never wrote ---------------------------------------------------------
    def awaiting_fence(self, cutoff: float) -> bool:
        """Whether an entry reserved at or before *cutoff* (now minus the write horizon) has no fence."""
        return any(entry.fence is None for entry in self._past(cutoff))

    def fence(self, cutoff: float, resource_version: int) -> int:
        """Stamp every entry reserved at or before *cutoff* and not fenced yet with
        *resource_version*, read from the apiserver after *cutoff*; returns how many."""
        now = self._clock.now()
        stamped = 0
        for entry in self._past(cutoff):
            if entry.fence is None:
                entry.fence, entry.fenced_at = resource_version, now
                stamped += 1
        return stamped

    def lowest_fence(self) -> int | None:
        """The smallest fence still held: the resourceVersion the pod watch must reach next."""
        fences = [entry.fence for entry in self._entries.values() if entry.fence is not None]
        return min(fences) if fences else None

    def release_unwritten(self, applied: int) -> list[Unwritten]:
        """Release every entry whose fence the pod watch has applied (*applied* is the watch's
        resourceVersion): had the apiserver written the object, the cache would have shown it bound
        (or at the resize's limits) and released the entry already."""
        return self._release_where(lambda key, entry: entry.fence is not None and entry.fence <= applied)

    def fenced_before(self, moment: float) -> dict[str, list[str]]:
        """Node -> pod keys of entries fenced at or before *moment* and still held."""
        found: dict[str, list[str]] = {}
        for key, entry in self._entries.items():
            if entry.fence is not None and entry.fenced_at <= moment:
                found.setdefault(entry.node, []).append(key)
        return found

    def release_absent(self, node: str, keys: list[str], present: set[str], fence: int) -> list[Unwritten]:
        """A consistent read at *fence* listed *present* (pod keys bound to *node*): entries among
        *keys* on *node* whose own fence is at most *fence* and whose pod it did not list go."""
        chosen = set(keys) - present
        return self._release_where(
            lambda key, entry: (
                key in chosen and entry.node == node and entry.fence is not None and entry.fence <= fence
            )
        )

    def _past(self, cutoff: float) -> Iterator[_Entry]:
        for entry in self._entries.values():  # insertion order is reservation order
            if entry.reserved_at > cutoff:
                return
            yield entry

    def _release_where(self, condition: Callable[[str, _Entry], bool]) -> list[Unwritten]:
        chosen = [(key, entry) for key, entry in self._entries.items() if condition(key, entry)]
        for key, _ in chosen:
            self.release(key)
        return [
            Unwritten(key, entry.node, entry.limits, entry.caller, entry.settles_at is not None)
            for key, entry in chosen
        ]
