"""Exact Kubernetes quantity arithmetic.

Sums of limits must never drift, so quantities are parsed into exact integers (cpu in millicores,
everything else in whole units, both rounded up like Quantity.MilliValue() / Quantity.Value()).
"""

from __future__ import annotations

import re
from fractions import Fraction

from limitguard.core.memo import Memo, MiB
from limitguard.core.text import quoted
from limitguard.errors import LimitguardError

# The grammar of resource.Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go).
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<exponent>[eE][+-]?\d+)|(?P<decimal>[numkMGTPE]))?$"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# Far beyond any real resource (an exabyte is 1e18); keeps hostile input from building huge integers.
_MAX_EXPONENT = 64
MILLI_RESOURCES = frozenset({"cpu"})


class QuantityError(LimitguardError, ValueError):
    """A value that is not a Kubernetes quantity."""


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity string (or a JSON number) exactly."""
    if isinstance(value, bool):
        raise QuantityError(f"quantity must be a string or number, not {value!r}")  # True or False
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"quantity {value!r} is not finite")
        return _parse_text(repr(value))
    if isinstance(value, str):
        return _parse_text(value)
    raise QuantityError(f"quantity must be a string or number, not {type(value).__name__}")


MAX_QUANTITY_TEXT = 64  # characters: longer than any quantity the apiserver accepts

# Policy: quantity text -> its exact value, 8,192 entries, 1 MiB (a valid text is at most 64
# characters; a longer one is refused before it is parsed, and errors are never kept), never cleared
# but when full.
_PARSED: Memo[str, Fraction] = Memo("quantities", entries=8192, max_bytes=1 * MiB, max_key_bytes=256)
# Policy: (milli, the value as written) -> its units, 16,384 entries, 2 MiB, never cleared but when full.
_UNITS: Memo[tuple[bool, object], int] = Memo(
    "quantity-units", entries=16384, max_bytes=2 * MiB, max_key_bytes=256
)


def _parse_text(text: str) -> Fraction:
    if len(text) > MAX_QUANTITY_TEXT:
        return _parse_uncached(text)  # refused, and never hashed for a memo
    parsed = _PARSED.get(text)
    if parsed is None:
        parsed = _parse_uncached(text)
        _PARSED.put(text, parsed, value_bytes=64)
    return parsed


def _parse_uncached(text: str) -> Fraction:
    match = _QUANTITY.match(text) if len(text) <= MAX_QUANTITY_TEXT else None
    if match is None:
        raise QuantityError(f"{quoted(text)} is not a valid quantity (e.g. 500m, 2, 1.5Gi, 1e3)")
    number = Fraction(match["number"])
    if match["binary"]:
        return number * 1024 ** _BINARY[match["binary"]]
    exponent = int(match["exponent"][1:]) if match["exponent"] else _DECIMAL.get(match["decimal"] or "", 0)
    if abs(exponent) > _MAX_EXPONENT:
        raise QuantityError(f"{quoted(text)} is out of range")
    return number * Fraction(10) ** exponent


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def _units_cached(milli: bool, value: object) -> int:
    key = (milli, value)
    units = _UNITS.get(key)
    if units is None:
        quantity = parse_quantity(value)
        units = _ceil(quantity * 1000 if milli else quantity)
        _UNITS.put(key, units, value_bytes=32)
    return units


def to_units(resource: str, value: object) -> int:
    """The integer amount of *resource* in *value*: millicores for cpu, whole units otherwise."""
    milli = resource in MILLI_RESOURCES
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return _units_cached(milli, value)
    quantity = parse_quantity(value)
    return _ceil(quantity * 1000 if milli else quantity)


_BINARY_STEPS = tuple(
    (suffix, 1024**power)
    for suffix, power in (("Ei", 6), ("Pi", 5), ("Ti", 4), ("Gi", 3), ("Mi", 2), ("Ki", 1))
)


def format_units(resource: str, units: int) -> str:
    """Render an amount the way an operator writes it (4, 500m, 2Gi, 1500000)."""
    if resource in MILLI_RESOURCES:
        return str(units // 1000) if units % 1000 == 0 else f"{units}m"
    if units and (resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")):
        for suffix, step in _BINARY_STEPS:
            if units % step == 0:
                return f"{units // step}{suffix}"
    return str(units)
