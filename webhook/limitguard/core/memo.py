"""The one bounded memo: every cache of answers in limitguard is a Memo.

A memo states its policy where it is made, in one line: its name, its bound in entries **and in
bytes**, and when it is cleared (never: bounded only; whenever a version it is told changes; after
a time to live, on the caller's clock). Keys come from requests, so the bytes are what bound it:
a key is measured once, on a miss, by the same walk as `core.memokeys` (about what CPython holds
for it), plus whatever the caller says the value holds beyond the key (a numpy mask, a message); a
key past the memo's per-key bound is not kept at all, and its answer is worked out each time. When
an entry would pass either bound the memo is emptied (cheaper than LRU bookkeeping on every hit,
and a burst of distinct shapes costs one refill, never more memory). Its counters (hits, misses,
evictions, bytes) are plain numbers read at scrape time: `live_memos()` lists every memo alive.

A hit is one dict lookup and one counter increment. RecentMemo keeps a handful of entries compared
by equality instead of by hash (kept candidate lists, whose keys are megabytes of JSON that a
memcmp compares faster than a hash of them is computed).
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from limitguard.core.memokeys import MAX_KEPT_KEY_SIZE, key_size

KiB = 1024
MiB = 1024 * KiB

Key = TypeVar("Key")
Value = TypeVar("Value")


class Cleared(enum.Enum):
    """When a memo forgets everything, besides when it is full."""

    NEVER = "never (bounded only)"
    ON_VERSION = "when the version it is told changes"
    ON_CHANGE = "by its owner, entry by entry or whole, when what the answers read changes"
    AFTER_TTL = "after its time to live"


@dataclass(frozen=True, slots=True)
class MemoStats:
    """One memo's counters at one moment (for metrics and tests)."""

    name: str
    entries: int
    bytes: int
    max_entries: int
    max_bytes: int
    hits: int
    misses: int
    evictions: int  # entries dropped because an entry would have passed a bound
    refused: int  # keys larger than the per-key bound, never kept


_LIVE: weakref.WeakSet[Memo[object, object]] = weakref.WeakSet()


def live_memos() -> list[MemoStats]:
    """The counters of every memo alive, by name (a metrics collector reads them at scrape time)."""
    return sorted((memo.stats() for memo in list(_LIVE)), key=lambda stats: stats.name)


class Memo(Generic[Key, Value]):
    """A dict of answers bounded in entries and bytes, cleared as its `cleared` policy says."""

    __slots__ = (
        "__weakref__",
        "_bytes",
        "_entries",
        "_expires",
        "cleared",
        "evictions",
        "hits",
        "max_bytes",
        "max_entries",
        "max_key_bytes",
        "misses",
        "name",
        "refused",
        "ttl",
        "version",
    )

    def __init__(
        self,
        name: str,
        *,
        entries: int,
        max_bytes: int,
        cleared: Cleared = Cleared.NEVER,
        max_key_bytes: int = MAX_KEPT_KEY_SIZE,
        ttl: float = 0.0,
    ) -> None:
        self.name = name
        self.max_entries = entries
        self.max_bytes = max_bytes
        self.max_key_bytes = min(max_key_bytes, max_bytes)
        self.cleared = cleared
        self.ttl = ttl
        self.version: Hashable = None  # what the entries were made at (Cleared.ON_VERSION)
        self._expires = 0.0
        self._bytes = 0
        self.hits = self.misses = self.evictions = self.refused = 0
        self._entries: dict[Key, tuple[Value, int]] | list[tuple[Key, Value, int]] = self._empty()
        _LIVE.add(self)  # type: ignore[arg-type]

    def _empty(self) -> dict[Key, tuple[Value, int]] | list[tuple[Key, Value, int]]:
        return {}

    # -- lookups --------------------------------------------------------------------------------
    def get(self, key: Key, default: Value | None = None) -> Value | None:
        """The value kept under *key*; *default* (a miss, counted) when there is none."""
        found = self._entries.get(key)  # type: ignore[union-attr]
        if found is None:
            self.misses += 1
            return default
        self.hits += 1
        return found[0]

    def put(self, key: Key, value: Value, *, measured: object = None, value_bytes: int = 0) -> bool:
        """Keep *value* under *key*; False when its key is too large to keep. *measured* is what
        stands for the key's size when the key holds ids (default: the key itself); *value_bytes*
        what the value holds beyond it."""
        size = key_size(key if measured is None else measured, self.max_key_bytes)
        if size is None or size + value_bytes > self.max_bytes:
            self.refused += 1
            return False
        size += value_bytes
        if len(self._entries) >= self.max_entries or self._bytes + size > self.max_bytes:
            self.evictions += len(self._entries)
            self._drop_all()
        self._store(key, value, size)
        self._bytes += size
        return True

    def _store(self, key: Key, value: Value, size: int) -> None:
        entries = self._entries
        assert isinstance(entries, dict)
        previous = entries.get(key)
        if previous is not None:
            self._bytes -= previous[1]
        entries[key] = (value, size)

    def get_or_make(
        self, key: Key, make: Callable[[], Value], value_bytes: Callable[[Value], int] | None = None
    ) -> Value:
        """The kept value of *key*, else *make()*, kept (when its key is small enough)."""
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found, value_bytes=value_bytes(found) if value_bytes is not None else 0)
        return found

    # -- clearing ---------------------------------------------------------------------------
    def _drop_all(self) -> None:
        self._entries = self._empty()
        self._bytes = 0

    def clear(self) -> None:
        """Forget everything (what the memo's answers depend on changed)."""
        if self._entries:
            self._drop_all()

    def at_version(self, version: Hashable) -> None:
        """Cleared.ON_VERSION: forget everything when *version* is not the one the entries were made at."""
        if version != self.version:
            self.clear()
            self.version = version

    def at_time(self, now: float) -> None:
        """Cleared.AFTER_TTL: forget everything once *now* (the caller's clock) passes the entries'
        time to live, counted from the first entry made after the last clearing."""
        if not self._entries:
            self._expires = now + self.ttl
        elif now >= self._expires:
            self.clear()
            self._expires = now + self.ttl

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries  # type: ignore[operator]

    def items(self) -> Iterator[tuple[Key, Value]]:
        entries = self._entries
        assert isinstance(entries, dict)
        return ((key, value) for key, (value, _) in list(entries.items()))

    def discard(self, key: Key) -> None:
        entries = self._entries
        assert isinstance(entries, dict)
        found = entries.pop(key, None)
        if found is not None:
            self._bytes -= found[1]

    @property
    def bytes(self) -> int:
        return self._bytes

    def stats(self) -> MemoStats:
        return MemoStats(
            self.name,
            len(self._entries),
            self._bytes,
            self.max_entries,
            self.max_bytes,
            self.hits,
            self.misses,
            self.evictions,
            self.refused,
        )

    def __repr__(self) -> str:
        return f"Memo({self.name!r}, {len(self._entries)}/{self.max_entries} entries, {self._bytes}/{self.max_bytes} bytes)"


class RecentMemo(Memo[Key, Value]):
    """A Memo of a handful of entries found by equality, the one used last kept longest.

    For keys that are compared faster than hashed: candidate lists as their JSON array (up to
    megabytes), one length check and one memcmp each, where a hash would read every byte of a new
    request's key before the lookup could start."""

    __slots__ = ()

    def _empty(self) -> list[tuple[Key, Value, int]]:
        return []

    def get(self, key: Key, default: Value | None = None) -> Value | None:
        """The value kept under *key*, its entry made the newest (the one used last goes last)."""
        entries = self._entries
        for position, entry in enumerate(entries):  # type: ignore[arg-type]
            if entry[0] == key:
                self.hits += 1
                if position != len(entries) - 1:
                    entries.append(entries.pop(position))  # type: ignore[union-attr]
                return entry[1]  # type: ignore[return-value]
        self.misses += 1
        return default

    def put(self, key: Key, value: Value, *, measured: object = None, value_bytes: int = 0) -> bool:
        """Keep *value* under *key* (newest), dropping the least recently used past the bounds; *measured*: what
        stands for the key's size (default: its length, for bytes-like keys)."""
        if measured is None and isinstance(key, (bytes, memoryview)):
            size: int | None = len(key) if len(key) <= self.max_key_bytes else None
        else:
            size = key_size(key if measured is None else measured, self.max_key_bytes)
        if size is None or size + value_bytes > self.max_bytes:
            self.refused += 1
            return False
        size += value_bytes
        entries = self._entries
        assert isinstance(entries, list)
        kept = [entry for entry in entries if entry[0] != key]
        while kept and (
            len(kept) >= self.max_entries or sum(entry[2] for entry in kept) + size > self.max_bytes
        ):
            kept.pop(0)
            self.evictions += 1
        kept.append((key, value, size))
        self._entries = kept
        self._bytes = sum(entry[2] for entry in kept)
        return True

    def items(self) -> Iterator[tuple[Key, Value]]:
        return ((key, value) for key, value, _ in list(self._entries))  # type: ignore[misc]

    def discard(self, key: Key) -> None:
        self._entries = [entry for entry in self._entries if entry[0] != key]  # type: ignore[union-attr]
        self._bytes = sum(entry[2] for entry in self._entries)  # type: ignore[union-attr]
