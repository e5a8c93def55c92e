"""Which rows of the node table each recent version changed.

An answer computed from the table at one version (an extender's kept scores) is brought up to date
by recomputing the rows changed since, when the log still reaches back that far; a change that may
have touched any row (growth, a new resource column, thousands of rows at once) is logged as such.
"""

from __future__ import annotations

from collections import deque

VERSIONS_LOGGED = 64
MOST_LOGGED_ROWS = 1024  # a larger change is logged as "any row"


class ChangeLog:
    __slots__ = ("_changes",)

    def __init__(self) -> None:
        self._changes: deque[tuple[int, list[int] | None]] = deque(maxlen=VERSIONS_LOGGED)  # oldest first

    def record(self, version: int, rows: list[int] | None) -> None:
        """*version* changed *rows* (None: any row may have changed)."""
        logged = None if rows is None or len(rows) > MOST_LOGGED_ROWS else rows
        self._changes.append((version, logged))

    def since(self, version: int, current: int) -> list[int] | None:
        """The rows changed after *version* up to *current* (a row may be listed twice), or None
        when that is not known: too long ago, or a change that may have touched any row."""
        if version == current:
            return []
        changes = self._changes
        if not changes or changes[0][0] > version + 1:
            return None
        changed: list[int] = []
        for logged_version, rows in reversed(changes):
            if logged_version <= version:
                break
            if rows is None:
                return None
            changed += rows
            if len(changed) > MOST_LOGGED_ROWS:
                return None
        return changed
