"""The node table's label index: label key -> value -> rows, and the row masks built from it.

Eligibility (state.scan) turns a nodeSelector pair or a required node-affinity requirement into a
union of row sets; the masks of common pairs are remembered until a node carrying the pair changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from limitguard.core.memo import Cleared, Memo, MiB

_MASK_CACHE_MIN_ROWS = 64  # label pairs this common get their boolean mask cached
_MASK_CACHE_SIZE = 256


class LabelRows:
    """Which rows carry which labels, over a table of `size` rows."""

    __slots__ = ("_labels", "_masks", "_row_labels", "keys_version", "size")

    def __init__(self) -> None:
        self.size = 0
        self.keys_version = 0  # counts the label keys' first appearances and last departures
        self._labels: dict[str, dict[str, set[int]]] = {}
        self._row_labels: dict[int, Mapping[str, str]] = {}
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
        for key, value in labels.items():
            values = self._labels.get(key)
            if values is None:
                values = self._labels[key] = {}
                self.keys_version += 1
            values.setdefault(value, set()).add(row)
            self._forget(key, value)

    def unindex(self, row: int) -> None:
        for key, value in self._row_labels.pop(row, {}).items():
            values = self._labels[key]
            values[value].discard(row)
            if not values[value]:
                del values[value]
                if not values:
                    del self._labels[key]
                    self.keys_version += 1
            self._forget(key, value)

    def _forget(self, key: str, value: str) -> None:
        self._masks.discard((key, value))
        self._masks.discard((key, None))

    def has_key(self, key: str) -> bool:
        """Whether some row carries the label *key*, whatever its value."""
        return key in self._labels

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
        values = self._labels.get(key, {})
        groups = list(values.values()) if value is None else [values.get(value, set())]
        mask = self.rows_mask(groups)
        if sum(len(rows) for rows in groups) >= _MASK_CACHE_MIN_ROWS:
            self._masks.put((key, value), mask, value_bytes=mask.nbytes)
        return mask

    def values_mask(self, key: str, test: Callable[[str], bool]) -> np.ndarray:
        """Rows whose label *key* has a value passing *test* (one call per distinct value)."""
        values = self._labels.get(key, {})
        return self.rows_mask(rows for value, rows in values.items() if test(value))
