"""What the scheduler-plugins args kinds share: null handling, replaced-value warnings, enum warnings.

Two stages, as the scheduler-plugins scheduler has them: decoding (the schema: types, unknown fields,
int32/int64 ranges) fails start-up whatever the profiles enable; the plugin's own checks (each module's
``validate``) run in the plugin's constructor, so only when a profile enables the plugin.
"""

from __future__ import annotations

import json
from typing import Any

from ...fields.findings import Finding, warning
from ...tables.readers import SCHEDULER_PLUGINS, Reader


def sigs_scheduler(reader: Reader) -> str:
    """How the findings name the build judged for: ``scheduler-plugins v0.33.5``, ``scheduler-plugins
    main (903da7df)``."""
    return reader.scheduler_label(SCHEDULER_PLUGINS)


def drop_nulls(obj: Any) -> None:
    """Go's decoder leaves a struct field at its zero value for ``null``: the same as leaving it out.

    For the fields of one struct only: a null map value or list item stays (Go keeps the key or the item,
    holding a zero value), so callers name each nested struct.
    """
    if isinstance(obj, dict):
        for key in [k for k, v in obj.items() if v is None]:
            del obj[key]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def replaced(path: str, value: Any, default: Any, why: str, reader: Reader) -> Finding:
    """A value the scheduler's defaulting silently replaces; ``why`` names the rule it breaks."""
    return warning(
        path,
        f"{json.dumps(value)} is replaced by the default {json.dumps(default)} ({why}; "
        f"{sigs_scheduler(reader)} does not refuse it)",
        "sigs.defaults-replaced",
        value,
    )


def unknown_value(path: str, value: Any, known: tuple[str, ...], consequence: str) -> Finding:
    """A string the plugin compares against its constants without checking: it starts, then acts as
    ``consequence`` says."""
    listed = ", ".join(json.dumps(k) for k in known)
    return warning(
        path,
        f"{json.dumps(value)} is none of {listed}: the plugin accepts it and {consequence}",
        "sigs.unknown-value",
        value,
    )


def empty_list_defaulted(path: str, default: list[str]) -> Finding:
    return warning(
        path,
        f"an empty list is replaced by the default {json.dumps(default)}, it does not mean all namespaces",
        "sigs.defaults-replaced",
        [],
    )


#: Folder of these kinds' schemas under limitguard/schemas/.
SCHEMA_DIR = "args/scheduler-plugins"


def as_go_int(value: Any, bits: int = 64) -> int | None:
    """An integer that decodes into a Go int of ``bits``; None otherwise (the schema reports overflow, and
    the plugin never sees a value its decoder refused)."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    ):
        return value
    return None


#: Schemas of kinds as the project's master branch has them (not in a release yet); a folder name that is
#: no Python identifier, so packaging treats it as data of its parent.
UNRELEASED_SCHEMA_DIR = "args/scheduler-plugins/master-branch"
