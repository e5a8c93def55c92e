"""The one bounded memo: bounds in entries and bytes, its clearing policies, its counters."""

from __future__ import annotations

from limitguard.core.memo import Cleared, Memo, RecentMemo, live_memos
from limitguard.core.memokeys import OBJECT_SIZE, key_size


def test_a_hit_and_a_miss_are_counted_and_a_kept_none_is_told_from_a_miss() -> None:
    memo: Memo[str, object] = Memo("test-counts", entries=4, max_bytes=4096)
    missing = object()
    assert memo.get("a", missing) is missing
    assert memo.put("a", None)
    assert memo.get("a", missing) is None
    stats = memo.stats()
    assert (stats.hits, stats.misses, stats.entries) == (1, 1, 1)
    assert stats.bytes == key_size("a") == OBJECT_SIZE + 1


def test_the_entry_bound_empties_the_memo_and_counts_the_evictions() -> None:
    memo: Memo[int, int] = Memo("test-entries", entries=3, max_bytes=1 << 20)
    for key in range(7):
        memo.put(key, key)
        assert len(memo) <= 3
    assert memo.evictions == 6 and len(memo) == 1 and memo.get(6) == 6


def test_many_distinct_small_keys_never_hold_more_than_the_byte_budget() -> None:
    """The attack the budget exists for: a sender of distinct small shapes, each under the per-key
    bound, as many as the entry bound allows."""
    memo: Memo[tuple[str, ...], int] = Memo("test-bytes", entries=100_000, max_bytes=64 * 1024)
    for index in range(5_000):
        key = (f"shape-{index}", "x" * 500)
        memo.put(key, index, value_bytes=100)
        assert memo.bytes <= 64 * 1024
    assert 0 < len(memo) < 5_000 and memo.evictions > 0
    assert memo.bytes == sum(key_size(key) + 100 for key, _ in memo.items())


def test_a_key_past_the_per_key_bound_is_refused_and_never_kept() -> None:
    memo: Memo[str, int] = Memo("test-large-key", entries=8, max_bytes=1 << 20, max_key_bytes=1024)
    assert not memo.put("x" * 2000, 1)
    assert len(memo) == 0 and memo.refused == 1 and memo.bytes == 0
    assert not memo.put("small", 1, value_bytes=2 << 20)  # a value larger than the whole budget
    assert len(memo) == 0


def test_replacing_a_key_does_not_count_it_twice() -> None:
    memo: Memo[str, int] = Memo("test-replace", entries=8, max_bytes=4096)
    memo.put("a", 1, value_bytes=10)
    memo.put("a", 2, value_bytes=20)
    assert memo.bytes == key_size("a") + 20 and memo.get("a") == 2
    memo.discard("a")
    assert memo.bytes == 0 and len(memo) == 0


def test_a_version_memo_forgets_everything_when_the_version_changes() -> None:
    memo: Memo[str, int] = Memo("test-version", entries=8, max_bytes=4096, cleared=Cleared.ON_VERSION)
    memo.at_version(1)
    memo.put("a", 1)
    memo.at_version(1)
    assert memo.get("a") == 1
    memo.at_version(2)
    assert memo.get("a") is None and memo.bytes == 0


def test_a_ttl_memo_forgets_everything_once_its_time_to_live_has_passed() -> None:
    memo: Memo[str, int] = Memo("test-ttl", entries=8, max_bytes=4096, cleared=Cleared.AFTER_TTL, ttl=5.0)
    memo.at_time(100.0)
    memo.put("a", 1)
    memo.at_time(104.9)
    assert memo.get("a") == 1
    memo.at_time(105.0)
    assert memo.get("a") is None


def test_a_recent_memo_finds_by_equality_and_drops_the_oldest() -> None:
    memo: RecentMemo[bytes, str] = RecentMemo("test-recent", entries=2, max_bytes=1000)
    memo.put(b"[1]", "one")
    memo.put(b"[2]", "two")
    assert memo.get(memoryview(b"[2]")) == "two"  # compared, not hashed
    memo.put(b"[3]", "three")
    assert memo.get(b"[1]") is None and memo.get(b"[2]") == "two" and memo.evictions == 1
    memo.put(b"[4]" * 200, "big", value_bytes=398)  # over the bytes with the others: they go first
    assert [key for key, _ in memo.items()] == [b"[4]" * 200] and memo.bytes == 600 + 398


def test_every_live_memo_reports_its_counters_by_name() -> None:
    memo: Memo[str, int] = Memo("test-live", entries=2, max_bytes=4096)
    memo.put("a", 1)
    memo.get("a")
    found = [stats for stats in live_memos() if stats.name == "test-live"]
    assert found and found[-1].hits >= 1 and found[-1].entries == 1


def test_the_entry_used_last_is_the_last_to_go() -> None:
    memo: RecentMemo[bytes, str] = RecentMemo("test-renew", entries=2, max_bytes=1000)
    memo.put(b"a", "a")
    memo.put(b"b", "b")
    assert memo.get(b"a") == "a"
    memo.put(b"c", "c")
    assert memo.get(b"a") == "a" and memo.get(b"b") is None and memo.bytes == 2


def test_bytes_keys_count_their_length() -> None:
    assert key_size(b"x" * 2000) == key_size(b"") + 2000
