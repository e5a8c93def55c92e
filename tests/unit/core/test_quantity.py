from fractions import Fraction

import pytest

from limitguard.core import quantity
from limitguard.core.quantity import QuantityError, format_units, parse_quantity, to_units


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("2Gi", 2 * 1024**3),
        ("1e3", 1000),
        ("1E3", 1000),
        ("500M", 500_000_000),
        (".5", Fraction(1, 2)),
        ("1.", 1),
        ("+2", 2),
        ("1n", Fraction(1, 10**9)),
        ("3u", Fraction(3, 10**6)),
        ("2k", 2000),
        ("1Ei", 1024**6),
        (4, 4),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse_quantity_is_exact(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "abc", "1.5.5", "1ki", "1 Gi", "NaN", "Infinity", "1_000", "1e999", "--1", "1Gb", True, None, [1]],
)
def test_parse_quantity_rejects_what_kubernetes_rejects(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_cpu_rounds_up_to_whole_millicores_like_milli_value():
    assert to_units("cpu", "0.0001") == 1
    assert to_units("cpu", "1.0005") == 1001
    assert to_units("cpu", "250m") == 250
    assert to_units("cpu", 2) == 2000


def test_other_resources_round_up_to_whole_units_like_value():
    assert to_units("memory", "1.5Ki") == 1536
    assert to_units("memory", "100m") == 1
    assert to_units("nvidia.com/gpu", "2") == 2
    assert to_units("hugepages-2Mi", "4Mi") == 4 * 1024**2


def test_no_float_drift_over_many_sums():
    # 0.1 cpu ten thousand times is exactly 1000 cpu; floats would not be.
    assert sum(to_units("cpu", "0.1") for _ in range(10_000)) == 1_000_000


@pytest.mark.parametrize(
    ("resource", "units", "text"),
    [
        ("cpu", 4000, "4"),
        ("cpu", 500, "500m"),
        ("memory", 2 * 1024**3, "2Gi"),
        ("memory", 1000, "1000"),
        ("nvidia.com/gpu", 3, "3"),
        ("hugepages-1Gi", 1024**3, "1Gi"),
        ("memory", 0, "0"),
    ],
)
def test_format_units(resource, units, text):
    assert format_units(resource, units) == text


@pytest.mark.parametrize("text", ["9" * 100_000 + "x", "1" + "Gi" * 50_000, "1e" + "9" * 70])
def test_a_malformed_quantity_is_clipped_in_its_error(text):
    """Anyone can send a pod whose limit is a 1 MB string; the error echoes its start and the count cut."""
    with pytest.raises(QuantityError) as raised:
        parse_quantity(text)
    message = str(raised.value)
    assert len(message) < 200
    assert message.startswith('"' + text[:20])
    assert '..." (' in message and "more characters)" in message  # the quote is closed before the count


def test_parsed_quantities_are_remembered_within_their_memo_and_a_long_text_is_never_kept() -> None:
    memo = quantity._PARSED
    memo.clear()
    hits = memo.hits
    assert parse_quantity("1536Mi") == parse_quantity("1536Mi") == 1536 * 2**20
    assert (len(memo), memo.hits - hits) == (1, 1)
    with pytest.raises(QuantityError):
        parse_quantity("1" * 100_000)
    assert len(memo) == 1  # refused before any lookup: never kept, never hashed for the memo
    for index in range(20_000):  # a sender of distinct quantities: the memo stays within its bounds
        parse_quantity(f"{index}m")
    assert len(memo) <= memo.max_entries and memo.stats().bytes <= memo.max_bytes
