"""A candidate list resolved to node-table rows once, and kept for the next call with the same list.

A list comes again: kube-scheduler sends a prioritize the names that passed the filter before it,
and a cluster whose every node it sends in the same order gets one list call after call.
Resolving 5,000 freshly decoded names is 5,000 hash computations and dict lookups (~0.3 ms, more
than scoring them); comparing the list's JSON array with a kept one is one memcmp. The node table
keeps the last resolutions until a node comes or goes (NodeTable.candidates).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from limitguard.core.memo import Cleared, RecentMemo

# A list whose key is this long or longer is not kept: no cluster's node names come near it (15,000
# names of 63 characters are ~1 MB), and a caller cannot make the kept keys hold much memory.
MOST_KEPT_KEY_BYTES = 2 << 20


def names_key(names: list[str]) -> bytes:
    """The candidates as a JSON array, the key a list is kept by: orjson's encoding, which is
    encoding/json's (kube-scheduler's) for node names, so a filter's passed names are kept under
    the bytes kube-scheduler sends to prioritize. Two lists share a key only if they are equal."""
    return orjson.dumps(names)


def checked_names(names: list[object]) -> bool:
    """Whether every item of *names* is a str: one join in C, faster than any per-name test."""
    try:
        "".join(names)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


LISTS_KEPT = 4  # a filter's list and its passed names, for a scheduler profile or two
# What the kept lists may hold in all: keys (under MOST_KEPT_KEY_BYTES each) and what is kept of them.
KEPT_LISTS_BYTES = 16 << 20


def kept_lists(name: str, cleared: Cleared = Cleared.NEVER) -> RecentMemo[bytes | memoryview, Any]:
    """A memo of what was made of the candidate lists sent lately, by each list's JSON array
    (names_key, or the bytes as sent), newest last: a list sent again is found with a length check
    and a memcmp. Policy: LISTS_KEPT lists, KEPT_LISTS_BYTES, keys under MOST_KEPT_KEY_BYTES,
    the least recently used dropped first; the node table clears its own when a node comes or goes."""
    return RecentMemo(
        name,
        entries=LISTS_KEPT,
        max_bytes=KEPT_LISTS_BYTES,
        max_key_bytes=MOST_KEPT_KEY_BYTES - 1,
        cleared=cleared,
    )


def _as_slice(rows: np.ndarray) -> np.ndarray | slice:
    """*rows* as a slice when they are consecutive ascending rows: indexing by it is a view, no copy."""
    if len(rows) and int(rows[-1]) - int(rows[0]) == len(rows) - 1 and bool((np.diff(rows) == 1).all()):
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


class Candidates:
    """Rows of a candidate list. Valid while the table's set of nodes is unchanged (the table drops
    its cached one on every node add or delete); the arrays are read-only."""

    __slots__ = ("_host_json", "_json_names", "count", "index", "known", "rows", "unknown")

    def __init__(self, rows: np.ndarray, json_names: np.ndarray) -> None:
        known = rows >= 0
        known_rows = rows[known]
        for array in (rows, known, known_rows):
            array.flags.writeable = False
        self.rows = rows  # each name's row, -1 for a name the table does not know
        self.known = known
        self.count = len(known_rows)  # known names (a name listed twice counts twice)
        self.unknown = len(rows) - self.count
        # The known names' rows, in order: a slice when consecutive (the usual cluster-wide list).
        self.index: np.ndarray | slice = _as_slice(known_rows)
        self._json_names = json_names
        self._host_json: list[bytes] | None = None

    @property
    def nbytes(self) -> int:
        """What its arrays hold, roughly (a memo's byte budget counts it)."""
        return self.rows.nbytes * 2 + self.known.nbytes + 64 * len(self._host_json or ())

    def subset(self, mask: np.ndarray) -> Candidates:
        """The candidates where *mask* is True, in order, without looking a name up again."""
        return Candidates(self.rows[mask], self._json_names)

    def host_json(self) -> list[bytes]:
        """The known names JSON-encoded (orjson, without the quotes), in order."""
        if self._host_json is None:
            self._host_json = self._json_names[self.index].tolist()
        return self._host_json
