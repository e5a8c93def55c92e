"""One object per distinct immutable value that many records hold: an interning table.

150,000 pods name a few dozen namespaces, a few thousand nodes and a handful of controller kinds
and priorities, but every parse (a file, a watch event) makes new objects for them, so without
sharing each pod would carry its own copies (~60 bytes a string). The records keep the shared
object instead, and the state's dicts keyed by node name then hold that same object.

Not `sys.intern`: from Python 3.12 interned strings are immortal, so the names of deleted
namespaces and nodes would stay forever. This table forgets values nothing else holds whenever
it doubles, so it stays as big as what the cluster uses. Sharing only ever changes identity, never
equality: a value the table forgot is simply no longer shared.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)

# References an entry has when only the table holds it, while _prune looks at it: the table's key
# and value (one object, two references), the snapshot list, the loop variable, getrefcount's argument.
_UNUSED_REFERENCES = 5


class Interner(Generic[T]):
    __slots__ = ("_floor", "_limit", "_table")

    def __init__(self, floor: int = 4096) -> None:
        self._table: dict[T, T] = {}
        self._floor = floor
        self._limit = floor

    def __call__(self, value: T) -> T:
        """The shared object equal to *value* (*value* itself the first time it is seen)."""
        shared = self._table.setdefault(value, value)
        if len(self._table) > self._limit:
            self._prune()
        return shared

    def __len__(self) -> int:
        return len(self._table)

    def _prune(self) -> None:
        """Forget the values no one else references; amortised O(1) per call (runs on doubling)."""
        table = self._table
        for value in list(table):
            if sys.getrefcount(value) <= _UNUSED_REFERENCES:
                table.pop(value, None)
        self._limit = max(self._floor, 2 * len(table))


shared_name: Interner[str] = Interner()  # namespaces, node names, label keys and values, resources
shared_owner: Interner[tuple[str, str]] = Interner(256)  # controller (group, kind)
shared_priority: Interner[int] = Interner(256)  # spec.priority: ints above 256 are objects of their own
