"""Limit-to-allocatable ratios (SPEC 2): the cluster default map and the per-node annotation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

RATIO_ANNOTATION = "node.koordinator.sh/limit-to-allocatable"
ACCEPTED_FORMS = (
    "a JSON object mapping resource names to an integer percent or a percent string, "
    'e.g. {"cpu": 150, "memory": "120%"}'
)

RatioMap = dict[str, int]

_PERCENT_STRING = re.compile(r"^(\d{1,9})%$")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


class RatioError(ValueError):
    """A ratio value or map that is malformed."""


def parse_ratio_percent(value: Any) -> int:
    """An integer percent from `150` or `"150%"`; everything else is malformed."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RatioError(f'{value!r} is not an integer percent or a percent string like "150%"')
    if isinstance(value, int):
        if value < 0:
            raise RatioError(f"{value} is negative")
        return value
    match = _PERCENT_STRING.match(value)
    if match is None:
        raise RatioError(f'{value!r} is not a percent string like "150%" (the % sign is required)')
    return int(match[1])


def is_valid_resource_name(name: Any) -> bool:
    """Kubernetes resource names: a qualified name with an optional DNS-subdomain prefix."""
    if not isinstance(name, str) or not name:
        return False
    prefix, slash, short_name = name.rpartition("/")
    if slash and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return len(short_name) <= 63 and bool(_QUALIFIED_NAME.match(short_name))


def parse_ratio_map(raw: Any) -> RatioMap:
    """A validated ratio map; the error names the first offending entry."""
    if not isinstance(raw, Mapping):
        raise RatioError(f"expected a JSON object, got {type(raw).__name__}")
    ratios: RatioMap = {}
    for resource, value in raw.items():
        if not is_valid_resource_name(resource):
            raise RatioError(f"{resource!r} is not a valid resource name")
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
