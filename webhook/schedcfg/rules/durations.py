"""Go ``time.Duration`` strings (``metav1.Duration`` in the configuration) as seconds.

kube-scheduler decodes durations with Go's ``time.ParseDuration``; the schema checks the syntax, this
turns a valid string into a number so rules can compare (``leaseDuration > renewDeadline``).
"""

from __future__ import annotations

import re

_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_go_duration(text: object) -> float | None:
    """Seconds of a Go duration string ("1m30s"), or None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    body, sign = text, 1.0
    if body[0] in "+-":
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    total, pos = 0.0, 0
    for match in _PART.finditer(body):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total if pos == len(body) and pos > 0 else None
