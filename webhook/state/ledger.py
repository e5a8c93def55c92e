"""Bindings approved but not yet seen bound (SPEC 4).

The cache lags the apiserver, so two bindings approved back to back for one node would both see
the old sum. Each approved binding is held here, counted toward its node, until the cache shows the
pod bound or the TTL expires. The ledger is per process; with several replicas only the elected
leader decides (and records) ledger requests, the others forward them (docs/replicas.md).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from limitguard.clock import Clock, SystemClock
from limitguard.core.podlimits import ResourceAmounts


@dataclass(slots=True)
class _Entry:
    node: str
    limits: Mapping[str, int]
    expires_at: float
    # A resize hold: released once the cache counts the pod at these limits (None: a binding,
    # released once the cache shows the pod bound).
    settles_at: Mapping[str, int] | None = None


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
        if pod_key in entries:
            self.release(pod_key)
        entries[pod_key] = _Entry(node, limits, self._clock.now() + self._ttl, settles_at)
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
