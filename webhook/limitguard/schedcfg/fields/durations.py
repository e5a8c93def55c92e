"""Go ``time.Duration`` strings (``metav1.Duration`` in the configuration) as seconds.

kube-scheduler decodes durations with Go's ``time.ParseDuration``; this is a translation of it
(golang/go src/time/format.go ``ParseDuration``, ``leadingInt``, ``leadingFraction``): the same
syntax ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`` or a bare ``0``, the same units, the same int64
nanosecond overflow rules (``-9223372036854775808ns`` is the smallest value, one more than
``9223372036854775807ns`` is refused), the same truncation of fractions to whole nanoseconds.
"""

from __future__ import annotations

_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
# The schemas' pattern for a metav1.Duration (syntax only; schemas.py adds the range check below).
GO_DURATION_PATTERN = "^[-+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
_LIMIT = 1 << 63  # Go works in uint64 and allows 1<<63 only for a negative duration
_DIGITS = frozenset("0123456789")


def _leading_int(text: str, pos: int) -> tuple[int, int] | None:
    """Go's leadingInt: the digits at pos as an integer, None past 1<<63."""
    value = 0
    while pos < len(text) and text[pos] in _DIGITS:
        if value > _LIMIT // 10:
            return None
        value = value * 10 + ord(text[pos]) - 48
        if value > _LIMIT:
            return None
        pos += 1
    return value, pos


def _leading_fraction(text: str, pos: int) -> tuple[int, float, int]:
    """Go's leadingFraction: digits after the point; those that would overflow are skipped."""
    value, scale, overflow = 0, 1.0, False
    while pos < len(text) and text[pos] in _DIGITS:
        if not overflow:
            if value > (_LIMIT - 1) // 10:
                overflow = True
            else:
                candidate = value * 10 + ord(text[pos]) - 48
                if candidate > _LIMIT:
                    overflow = True
                else:
                    value, scale = candidate, scale * 10
        pos += 1
    return value, scale, pos


def parse_go_duration_ns(text: object) -> int | None:
    """Nanoseconds of a Go duration string, or None where time.ParseDuration returns an error."""
    if not isinstance(text, str):
        return None
    pos, negative = 0, False
    if text and text[0] in "+-":
        negative, pos = text[0] == "-", 1
    if text[pos:] == "0":
        return 0
    if pos == len(text):
        return None
    total = 0
    while pos < len(text):
        if text[pos] != "." and text[pos] not in _DIGITS:
            return None
        start = pos
        leading = _leading_int(text, pos)
        if leading is None:
            return None
        whole, pos = leading
        before = pos != start
        fraction, scale, after = 0, 1.0, False
        if pos < len(text) and text[pos] == ".":
            pos += 1
            start = pos
            fraction, scale, pos = _leading_fraction(text, pos)
            after = pos != start
        if not before and not after:
            return None
        start = pos
        while pos < len(text) and text[pos] != "." and text[pos] not in _DIGITS:
            pos += 1
        unit = _UNIT_NS.get(text[start:pos])
        if unit is None:  # a missing unit ("3") or an unknown one ("1d")
            return None
        if whole > _LIMIT // unit:
            return None
        whole *= unit
        if fraction > 0:
            # Go: float64 is needed to be nanosecond accurate for fractions of hours
            whole += int(float(fraction) * (float(unit) / scale))
            if whole > _LIMIT:
                return None
        total += whole
        if total > _LIMIT:
            return None
    if negative:
        return -total
    return total if total < _LIMIT else None


def parse_go_duration(text: object) -> float | None:
    """Seconds of a Go duration string ("1m30s"), or None when time.ParseDuration refuses it."""
    nanoseconds = parse_go_duration_ns(text)
    return None if nanoseconds is None else nanoseconds / 1e9
