"""The node table's change log (state.changelog): the rows since a version, or None when unknown."""

from __future__ import annotations

from limitguard.state.changelog import MOST_LOGGED_ROWS, VERSIONS_LOGGED, ChangeLog


def test_the_rows_since_a_version_are_those_of_every_later_version():
    log = ChangeLog()
    for version, rows in enumerate([[3], [5, 3], [], [9]], start=1):
        log.record(version, rows)
    assert log.since(1, 4) == [9, 5, 3]  # newest first; a row may come twice
    assert log.since(4, 4) == [] and log.since(3, 4) == [9]
    assert log.since(0, 4) == [9, 5, 3, 3]


def test_what_the_log_cannot_say_is_none():
    log = ChangeLog()
    for version in range(1, VERSIONS_LOGGED + 2):
        log.record(version, [version])
    assert log.since(0, VERSIONS_LOGGED + 1) is None  # version 1 fell out of the log
    assert log.since(1, VERSIONS_LOGGED + 1) == list(range(VERSIONS_LOGGED + 1, 1, -1))
    log.record(VERSIONS_LOGGED + 2, None)  # any row
    assert log.since(VERSIONS_LOGGED + 1, VERSIONS_LOGGED + 2) is None
    log.record(VERSIONS_LOGGED + 3, list(range(MOST_LOGGED_ROWS + 1)))  # too many to list
    assert log.since(VERSIONS_LOGGED + 2, VERSIONS_LOGGED + 3) is None
    log.record(VERSIONS_LOGGED + 4, list(range(MOST_LOGGED_ROWS)))
    log.record(VERSIONS_LOGGED + 5, [1])
    assert log.since(VERSIONS_LOGGED + 3, VERSIONS_LOGGED + 5) is None  # together past the bound
    assert len(log.since(VERSIONS_LOGGED + 4, VERSIONS_LOGGED + 5)) == 1
