"""Field paths as Kubernetes prints them (`profiles[0].pluginConfig[1].args.resources["nvidia.com/gpu"]`).

The one helper every validator uses - the scheduler-configuration validator, limitguard's own
configuration and the extender's section - so a path reads the same wherever it is reported.
"""

from __future__ import annotations

import json
import re

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def path_join(base: str, *parts: str | int) -> str:
    """Extend a field path: ints become ``[i]``, identifier keys ``.key``, other keys ``["key"]``.

    Map keys such as resource names are not identifiers (``nvidia.com/gpu``), so they are quoted in
    brackets exactly like SPEC 6 shows; plain field names stay dotted.
    """
    out = base
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.match(part):
            out = f"{out}.{part}" if out else part
        else:
            out += "[" + json.dumps(part, ensure_ascii=False) + "]"
    return out


def path_prefixes(path: str) -> list[str]:
    """Every field path *path* lies under, outermost first, *path* itself last:
    `a.b[0]["x.y"]` -> `a`, `a.b`, `a.b[0]`, `a.b[0]["x.y"]` (a quoted key's dots do not split it)."""
    prefixes: list[str] = []
    quoted = escaped = False
    for index, char in enumerate(path):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in ".[" and index > 0:
            prefixes.append(path[:index])
    if path:
        prefixes.append(path)
    return prefixes
