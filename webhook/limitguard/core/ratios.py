"""Limit-to-allocatable ratios (SPEC 2): the cluster default map and the per-node annotation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from limitguard.core.names import RESOURCE_NAME_HINT, is_valid_resource_name
from limitguard.core.text import clip
from limitguard.errors import LimitguardError

RATIO_ANNOTATION = "node.koordinator.sh/limit-to-allocatable"
ACCEPTED_FORMS = (
    "a JSON object mapping resource names to an integer percent or a percent string, "
    'e.g. {"cpu": 150, "memory": "120%"}'
)

RatioMap = dict[str, int]

#: Resource names one ratio map may name. A node's allocatable lists cpu, memory, ephemeral-storage,
#: pods, two or three hugepage sizes and a few extended resources (GPUs, RDMA, SR-IOV functions), so 32
#: leaves room for any real node while bounding what one annotation can add to every replica's node
#: table (a 256 KiB annotation can otherwise name ~9,000 resources, each a column over all nodes).
MAX_RATIO_RESOURCES = 32

_PERCENT_STRING = re.compile(r"^([0-9]+)%$")
_FORMS = 'must be an integer percent (150) or a percent string ("150%")'


class RatioError(LimitguardError, ValueError):
    """A ratio value or map that is malformed."""


def parse_ratio_percent(value: Any) -> int:
    """An integer percent from `150` or `"150%"`; `"150"`, floats, negatives, booleans are malformed."""
    if isinstance(value, bool):
        raise RatioError(f"invalid ratio {json.dumps(value)}: a boolean is not a percent")
    if isinstance(value, int):
        if value < 0:
            raise RatioError(f"invalid ratio {value}: must not be negative")
        return value
    if isinstance(value, float):
        raise RatioError(f"invalid ratio {value!r}: must be a whole percent, not a float")
    if isinstance(value, str):
        match = _PERCENT_STRING.match(value)
        if match:
            return int(match.group(1))
        if value.isdigit():
            raise RatioError(
                f'invalid ratio "{value}": a string needs a % sign ("{value}%") or use the integer {int(value)}'
            )
        raise RatioError(f"invalid ratio {json.dumps(value)[:40]}: {_FORMS}")
    raise RatioError(f"invalid ratio {json.dumps(value, default=str)[:40]}: {_FORMS}")


def parse_ratio_map(raw: Any) -> RatioMap:
    """A validated ratio map; the error names the first offending entry."""
    if not isinstance(raw, Mapping):
        raise RatioError(f"expected a JSON object, got {type(raw).__name__}")
    if len(raw) > MAX_RATIO_RESOURCES:
        raise RatioError(f"names {len(raw)} resources; at most {MAX_RATIO_RESOURCES} are allowed")
    ratios: RatioMap = {}
    for resource, value in raw.items():
        if not is_valid_resource_name(resource):
            raise RatioError(f"{clip(repr(resource))} is not a valid resource name: {RESOURCE_NAME_HINT}")
        try:
            ratios[resource] = parse_ratio_percent(value)
        except RatioError as error:
            raise RatioError(f"{resource}: {error}") from None
    return ratios


def parse_ratio_annotation(text: str) -> RatioMap:
    """The per-node override from its annotation text (JSON)."""
    try:
        raw = json.loads(text)
    except (ValueError, TypeError) as error:
        raise RatioError(f"not valid JSON ({error})") from None
    return parse_ratio_map(raw)


def limit_capacity(allocatable: int, percent: int) -> int:
    """allocatable x percent / 100, truncated (integer arithmetic only)."""
    return allocatable * percent // 100
