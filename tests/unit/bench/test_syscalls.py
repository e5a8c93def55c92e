"""bench.syscalls: `strace -c` summaries read into calls by system call (a table strace 6.1 printed)."""

from __future__ import annotations

from bench.syscalls import parse_summary

SUMMARY = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 82.24    0.200707        2508        80        40 wait4
  2.52    0.006142           4      1372       589 openat
  2.21    0.005395           5       945           mmap
  0.00    0.000005           2         2           gettid
------ ----------- ----------- --------- --------- ----------------
100.00    0.244060          27      2399       629 total
"""


def test_calls_are_read_with_or_without_an_errors_column_and_the_total_is_left_out() -> None:
    assert parse_summary(SUMMARY) == {"wait4": 80, "openat": 1372, "mmap": 945, "gettid": 2}


def test_an_empty_summary_counts_nothing() -> None:
    assert parse_summary("") == {}
