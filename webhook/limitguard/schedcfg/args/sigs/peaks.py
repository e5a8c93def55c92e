"""PeaksArgs of scheduler-plugins (apis/config/v1 types.go; pkg/trimaran/peaks New and initNodePowerModels;
tag v0.34.7).

The v1 struct tags of PeaksArgs are malformed (`json:watcherAddress",inline"`), so Go ignores them and the
fields decode under their Go names, case-sensitively: ``WatcherAddress`` and ``NodePowerModel`` (as the
project's own pkg/trimaran/peaks/deployment/scheduler-config.yaml writes them). ``watcherAddress`` is an
unknown field.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, required, warning
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, drop_nulls, sigs_scheduler


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)  # PeaksArgs has no defaulting function
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    address = args.get("WatcherAddress", "")
    if address == "":
        findings.append(
            required(
                path_join(path, "WatcherAddress"),
                "the Peaks plugin reads load-watcher at this address; without it the collector has no metric "
                f'provider ("invalid MetricProvider.Type") and {sigs_scheduler(reader)} does not start',
                "sigs.peaks.watcher",
            )
        )
    if not args.get("NodePowerModel"):
        findings.append(
            warning(
                path_join(path, "NodePowerModel"),
                "empty: the plugin reads the power models from the JSON file named by the scheduler's "
                f"NODE_POWER_MODEL environment variable, and {sigs_scheduler(reader)} does not start when "
                "that file is missing or invalid",
                "sigs.peaks.power-model",
            )
        )
    return findings


ARGS = ArgsKind("PeaksArgs", "Peaks", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
