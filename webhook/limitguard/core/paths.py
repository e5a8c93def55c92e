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
