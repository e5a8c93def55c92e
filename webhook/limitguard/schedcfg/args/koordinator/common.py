"""What the Koordinator args kinds share: Go-like reading of decoded values, weight and strategy checks.

Two stages, as koord-scheduler has them: decoding (the schema: types, unknown fields, int32/int64
ranges, duration and quantity syntax) fails start-up whatever the profiles enable; the checks of
pkg/scheduler/apis/config/validation run in each plugin's constructor (``New``), so only when a profile
enables the plugin. Values are read after ``default`` has run, like the constructors see them.
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join
from limitguard.core.quantity import QuantityError, parse_quantity

from ...fields.durations import parse_go_duration
from ...fields.findings import Finding, invalid, warning
from ...fields.values import as_dict, as_list
from ...tables.readers import KOORD_SCHEDULER, Reader
from ..sigs.common import as_go_int, drop_nulls

__all__ = [
    "SCHEMA_DIR",
    "as_go_int",
    "drop_nulls",
    "duration_seconds",
    "int_entries",
    "koord_scheduler",
    "negative_quantities",
    "replaced_empty",
    "scoring_strategy_findings",
]


def koord_scheduler(reader: Reader) -> str:
    """How the findings name the build judged for: ``koord-scheduler v1.7.0``, ``koord-scheduler main
    (a7a1b76b)``."""
    return reader.scheduler_label(KOORD_SCHEDULER)


#: Folder of these kinds' schemas under limitguard/schemas/.
SCHEMA_DIR = "args/koordinator"

#: The ScoringStrategy types the NodeNUMAResource and DeviceShare constructors have a scorer for
#: (nodenumaresource/scoring.go resourceStrategyTypeMap, deviceshare/scoring.go
#: deviceResourceStrategyTypeMap): BalancedAllocation is declared in types.go but has none.
STRATEGY_TYPES = ("LeastAllocated", "MostAllocated")


def int_entries(value: Any, bits: int = 64) -> list[tuple[str, int]]:
    """The (name, value) pairs of a ``map[ResourceName]int64`` as Go holds it: a null value is 0 (the key
    stays), a value the decoder refuses is left to the schema."""
    entries = []
    for name, item in as_dict(value).items():
        number = 0 if item is None else as_go_int(item, bits)
        if number is not None:
            entries.append((str(name), number))
    return entries


def duration_seconds(value: Any) -> float | None:
    """Seconds of a decoded ``*metav1.Duration`` (None when absent or not a Go duration)."""
    return parse_go_duration(value)


def negative_quantities(value: Any, path: str, message: str, rule: str) -> list[Finding]:
    """Entries of a ResourceList below zero; ``message`` is formatted with the resource name."""
    findings = []
    for name, quantity in as_dict(value).items():
        if quantity is None:
            continue
        try:
            negative = parse_quantity(quantity) < 0
        except QuantityError:
            continue  # the schema reports the syntax
        if negative:
            findings.append(invalid(path_join(path, str(name)), quantity, message.format(name=name), rule))
    return findings


def scoring_strategy_findings(strategy: Any, path: str, what: str) -> list[Finding]:
    """A ScoringStrategy as validateResources and the plugin's constructor see it.

    validateResources: each weight in (0, 100] (a missing or null weight is 0). The constructor then
    looks the type up among the scorers it has, so an omitted type ("") also stops the start.
    """
    findings: list[Finding] = []
    strategy = as_dict(strategy)
    for i, resource in enumerate(as_list(strategy.get("resources"))):
        resource = as_dict(resource)
        weight = as_go_int(resource.get("weight") or 0)
        if weight is not None and not 0 < weight <= 100:
            name = resource.get("name") if isinstance(resource.get("name"), str) else ""
            findings.append(
                invalid(
                    path_join(path, "resources", i, "weight"),
                    weight,
                    f"resource weight of {name} not in valid range (0, 100]",
                    "koord.scoring-strategy.weight",
                )
            )
    kind = strategy.get("type") or ""
    if isinstance(kind, str) and kind not in STRATEGY_TYPES:
        listed = ", ".join(json.dumps(t) for t in STRATEGY_TYPES)
        findings.append(
            invalid(
                path_join(path, "type"),
                kind,
                f"{what} {kind} is not supported (supported: {listed})",
                "koord.scoring-strategy.type",
            )
        )
    return findings


def replaced_empty(path: str, default: Any, meaning: str, reader: Reader) -> Finding:
    """An explicitly empty map or list that the defaulting treats as unset."""
    return warning(
        path,
        f"empty, so it is replaced by the default {json.dumps(default)} ({koord_scheduler(reader)} treats "
        f"an empty value as unset); {meaning}",
        "koord.defaults-replaced",
    )
