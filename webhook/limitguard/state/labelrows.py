"""The node table's label index: label key -> value -> rows, and the row masks built from it.

Eligibility (state.scan) turns a nodeSelector pair or a required node-affinity requirement into a
union of row sets; the masks of common pairs are remembered until a node carrying the pair changes.

A node carries dozens of labels (a cloud node 40 to 90: zone, instance type, images, GPU features),
and pods select on a few of them. So a key's rows are indexed only once a query reads that key, and
kept current from then on; every other key is only counted (how many rows carry it), which is what
`has_key` answers. A table of 2,300 such nodes held 10.7 MiB of row sets when every key was indexed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from limitguard.core.memo import Cleared, Memo, MiB

_MASK_CACHE_MIN_ROWS = 64  # label pairs this common get their boolean mask cached
_MASK_CACHE_SIZE = 256


class LabelRows:
    """Which rows carry which labels, over a table of `size` rows."""

    __slots__ = ("_indexed", "_key_rows", "_masks", "_row_labels", "keys_version", "size")

    def __init__(self) -> None:
        self.size = 0
        self.keys_version = 0  # counts the label keys' first appearances and last departures
        self._row_labels: dict[int, Mapping[str, str]] = {}
        self._key_rows: dict[str, int] = {}  # key -> how many rows carry it
        # key -> value -> rows, for the keys a query has read (built then, kept current after)
        self._indexed: dict[str, dict[str, set[int]]] = {}
        # Policy: per label pair, _MASK_CACHE_SIZE masks, 8 MiB, each forgotten when a node with the
        # pair changes, all when the table grows.
        self._masks: Memo[tuple[str, str | None], np.ndarray] = Memo(
            "label-masks", entries=_MASK_CACHE_SIZE, max_bytes=8 * MiB, cleared=Cleared.ON_CHANGE
        )

    def grow(self, size: int) -> None:
        self.size = size
        self._masks.clear()

    def index(self, row: int, labels: Mapping[str, str]) -> None:
        self._row_labels[row] = labels
        key_rows = self._key_rows
        for key in labels:
            count = key_rows.get(key, 0)
            if not count:
                self.keys_version += 1
            key_rows[key] = count + 1
        for key, values in self._indexed.items():
            value = labels.get(key)
            if value is not None:
                values.setdefault(value, set()).add(row)
                self._forget(key, value)

    def unindex(self, row: int) -> None:
        labels = self._row_labels.pop(row, None)
        if not labels:
            return
        key_rows = self._key_rows
        for key in labels:
            count = key_rows[key] - 1
            if count:
                key_rows[key] = count
            else:
                del key_rows[key]
                self.keys_version += 1
        for key, values in self._indexed.items():
            value = labels.get(key)
            if value is None:
                continue
            rows = values[value]
            rows.discard(row)
            if not rows:
                del values[value]
            self._forget(key, value)

    def _values(self, key: str) -> dict[str, set[int]]:
        """*key*'s value -> rows, indexed on the first query of *key* (a key no row carries is not
        indexed: a selector naming unknown keys costs nothing to keep)."""
        values = self._indexed.get(key)
        if values is not None:
            return values
        values = {}
        if key not in self._key_rows:
            return values
        for row, labels in self._row_labels.items():
            value = labels.get(key)
            if value is not None:
                values.setdefault(value, set()).add(row)
        self._indexed[key] = values
        return values

    def _forget(self, key: str, value: str) -> None:
        self._masks.discard((key, value))
        self._masks.discard((key, None))

    def has_key(self, key: str) -> bool:
        """Whether some row carries the label *key*, whatever its value."""
        return key in self._key_rows

    def rows_mask(self, groups: Iterable[set[int]]) -> np.ndarray:
        mask = np.zeros(self.size, bool)
        for rows in groups:
            if rows:
                mask[np.fromiter(rows, np.intp, len(rows))] = True
        return mask

    def label_mask(self, key: str, value: str | None) -> np.ndarray:
        """Rows whose label *key* is *value* (None: rows that have the key at all)."""
        cached = self._masks.get((key, value))
        if cached is not None:
            return cached
        values = self._values(key)
        groups = list(values.values()) if value is None else [values.get(value, set())]
        mask = self.rows_mask(groups)
        if sum(len(rows) for rows in groups) >= _MASK_CACHE_MIN_ROWS:
            self._masks.put((key, value), mask, value_bytes=mask.nbytes)
        return mask

    def values_mask(self, key: str, test: Callable[[str], bool]) -> np.ndarray:
        """Rows whose label *key* has a value passing *test* (one call per distinct value)."""
        values = self._values(key)
        return self.rows_mask(rows for value, rows in values.items() if test(value))
