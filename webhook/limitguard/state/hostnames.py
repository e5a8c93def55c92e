"""Each node row's `kubernetes.io/hostname` label value as an int code, kept as nodes change.

A placement hint names nodes by that value, and must know which values more than one node
carries: with codes in an int32 array, both are vector operations over the rows rather than a
Python pass over every node's labels per hinted pod.
"""

from __future__ import annotations

import numpy as np

NO_VALUE = -1  # the row's node has no hostname label (or there is no node)


class HostnameCodes:
    def __init__(self) -> None:
        self.codes = np.zeros(0, np.int32)
        self.values: list[str] = []  # code -> value ("" once no row has it; the code is reused)
        self._ids: dict[str, int] = {}
        self._rows: list[int] = []  # code -> how many rows carry it
        self._free: list[int] = []
        self.shared = 0  # values carried by more than one row

    def grow(self, size: int) -> None:
        codes = np.full(size, NO_VALUE, np.int32)
        codes[: len(self.codes)] = self.codes
        self.codes = codes

    def set(self, row: int, value: str | None) -> None:
        """Row *row* now carries *value* (None: no label, or the row's node is gone)."""
        old = int(self.codes[row])
        if old != NO_VALUE:
            self._rows[old] -= 1
            self.shared -= self._rows[old] == 1
            if self._rows[old] == 0:
                del self._ids[self.values[old]]
                self.values[old] = ""
                self._free.append(old)
        if value is None:
            self.codes[row] = NO_VALUE
            return
        code = self._ids.get(value)
        if code is None:
            code = self._free.pop() if self._free else len(self.values)
            if code == len(self.values):
                self.values.append(value)
                self._rows.append(0)
            else:
                self.values[code] = value
            self._ids[value] = code
        self._rows[code] += 1
        self.shared += self._rows[code] == 2
        self.codes[row] = code
