"""Freed large blocks go back to the system (limitguard.http.heap), measured as the process's VmRSS."""

from __future__ import annotations

from pathlib import Path

import pytest
from limitguard.http.heap import keep_large_blocks_apart

STATUS = Path("/proc/self/status")
BLOCK = 16 * 1024 * 1024


def rss_bytes() -> int:
    for line in STATUS.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not STATUS.exists(), reason="needs /proc")
def test_a_freed_large_block_leaves_the_resident_set_even_after_an_earlier_one():
    """glibc alone would serve the second block from its heap (its mmap threshold rose when the
    first was freed) and keep its pages; with the threshold pinned each block is its own mapping."""
    keep_large_blocks_apart()
    live = []
    for _ in range(3):
        block = bytearray(BLOCK)  # zero-filled: every page touched
        live.append([bytes(100) for _ in range(2000)])  # small objects allocated after it stay live
        held = rss_bytes()
        del block
        assert held - rss_bytes() > BLOCK // 2
    # without the pinned threshold the second and third blocks stayed resident here (0 MB returned)
