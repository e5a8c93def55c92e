"""Fields a release's strict decoder does not know, although a later release has them.

The v1 schema (limitguard/schemas/kubescheduler-config-v1.schema.json) describes the union of every supported
release, so that one schema serves all of them; kube-scheduler decodes strictly, so a field its release
lacks fails start-up ("strict decoding error: unknown field ..."). This module reports those fields for
the chosen release, from the same tables the framework checks use.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..fields.findings import Finding
from ..fields.values import as_dict, as_list
from ..tables.plugin_tables import POINT_SINCE
from ..tables.readers import Reader


def check_release_fields(config: dict[str, Any], reader: Reader) -> list[Finding]:
    """Unknown-field errors for extension points newer than ``release`` (one per field, like the schema's)."""
    findings: list[Finding] = []
    for i, profile in enumerate(as_list(config.get("profiles"))):
        plugins = as_dict(as_dict(profile).get("plugins"))
        for point in plugins:
            since = POINT_SINCE.get(str(point))
            if since is not None and reader.release.minor < since:
                findings.append(
                    Finding(
                        "error",
                        path_join("profiles", i, "plugins", str(point)),
                        f'Forbidden: unknown field "{point}" ({reader.label} fails with a strict '
                        f"decoding error: the {point} extension point exists from Kubernetes 1.{since})",
                        "schema.unknown-field",
                    )
                )
    return findings
