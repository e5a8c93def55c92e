"""Limit-to-allocatable ratios (SPEC 2): the cluster default map and the per-node annotation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from limitguard.core.names import is_valid_resource_name
from limitguard.core.text import clip, quoted
from limitguard.errors import LimitguardError

RATIO_ANNOTATION = "node.koordinator.sh/limit-to-allocatable"
RATIO_EXAMPLE = '{"cpu": 150, "memory": "120%"}'

RatioMap = dict[str, int]

#: Resource names one ratio map may name. A node's allocatable lists cpu, memory, ephemeral-storage,
#: pods, two or three hugepage sizes and a few extended resources (GPUs, RDMA, SR-IOV functions), so 32
#: leaves room for any real node while bounding what one annotation can add to every replica's node
#: table (a 256 KiB annotation can otherwise name ~9,000 resources, each a column over all nodes).
MAX_RATIO_RESOURCES = 32

_PERCENT_STRING = re.compile(r"^([0-9]+)%$")
PERCENT_FORMS = 'must be a percent: 150 or "150%"'
#: How long a value (and a resource name) is quoted in a ratio's error: the node annotation's denial
#: quotes one of each after its field path and stays under 200 characters whatever the annotation.
ECHO_LENGTH, NAME_LENGTH = 44, 24
#: The longest digit string answered with "add a % sign" (a percent string has at most 9 digits,
#: as the schemas say); a longer one is only quoted once.
_DIGITS_HINTED = 9


class RatioError(LimitguardError, ValueError):
    """A ratio value or map that is malformed."""


def parse_ratio_percent(value: Any) -> int:
    """An integer percent from `150` or `"150%"`; `"150"`, floats, negatives, booleans are malformed."""
    if isinstance(value, bool):
        raise RatioError(f"invalid ratio {json.dumps(value)}: a boolean is not a percent")
    if isinstance(value, int):
        if value < 0:
            raise RatioError(f"invalid ratio {clip(str(value), ECHO_LENGTH)}: must not be negative")
        return value
    if isinstance(value, float):
        raise RatioError(f"invalid ratio {value!r}: must be a whole percent, not a float")
    if isinstance(value, str):
        match = _PERCENT_STRING.match(value)
        if match:
            return int(match.group(1))
        if value.isdigit() and len(value) <= _DIGITS_HINTED:
            raise RatioError(
                f'invalid ratio "{value}": a string needs a % sign ("{value}%") or use the integer {int(value)}'
            )
        raise RatioError(f"invalid ratio {quoted(value, ECHO_LENGTH)}: {PERCENT_FORMS}")
    kind = "an object" if isinstance(value, Mapping) else "a list" if isinstance(value, list) else "null"
    raise RatioError(f"invalid ratio: {kind} is not a percent; {PERCENT_FORMS}")


def parse_ratio_map(raw: Any) -> RatioMap:
    """A validated ratio map; the error names the first offending entry."""
    if not isinstance(raw, Mapping):
        raise RatioError(f"expected a JSON object such as {RATIO_EXAMPLE}, got {_json_kind(raw)}")
    if len(raw) > MAX_RATIO_RESOURCES:
        raise RatioError(f"names {len(raw)} resources; at most {MAX_RATIO_RESOURCES} are allowed")
    ratios: RatioMap = {}
    for resource, value in raw.items():
        if not is_valid_resource_name(resource):
            raise RatioError(
                f"{quoted(str(resource), ECHO_LENGTH)} is not a resource name (such as cpu, memory, nvidia.com/gpu)"
            )
        try:
            ratios[resource] = parse_ratio_percent(value)
        except RatioError as error:
            raise RatioError(f"{clip(resource, NAME_LENGTH)}: {error}") from None
    return ratios


def parse_ratio_annotation(text: str) -> RatioMap:
    """The per-node override from its annotation text (JSON)."""
    try:
        raw = json.loads(text)
    except ValueError as error:  # also an integer past Python's 4,300 digits
        raise RatioError(f"not valid JSON ({clip(str(error), 48)}); expected e.g. {RATIO_EXAMPLE}") from None
    return parse_ratio_map(raw)


def _json_kind(value: Any) -> str:
    """What a decoded JSON value is, named as JSON names it (the value itself may be huge)."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null"


def limit_capacity(allocatable: int, percent: int) -> int:
    """allocatable x percent / 100, truncated (integer arithmetic only)."""
    return allocatable * percent // 100
