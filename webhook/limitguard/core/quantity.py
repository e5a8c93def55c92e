"""Exact Kubernetes quantity arithmetic.

Sums of limits must never drift, so quantities are parsed into exact integers (cpu in millicores,
everything else in whole units, both rounded up like Quantity.MilliValue() / Quantity.Value()).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

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


@lru_cache(maxsize=8192)
def _parse_text(text: str) -> Fraction:
    match = _QUANTITY.match(text) if len(text) <= 64 else None
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


@lru_cache(maxsize=16384)
def _units_cached(milli: bool, value: object) -> int:
    quantity = parse_quantity(value)
    return _ceil(quantity * 1000 if milli else quantity)


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
