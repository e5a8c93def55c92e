"""DeviceShareArgs (Koordinator v1.8.0: apis/config/v1 SetDefaults_DeviceShareArgs,
apis/config/validation ValidateDeviceShareArgs and the scorer lookup of plugins/deviceshare New)."""

from __future__ import annotations

import copy
import json
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, warning
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, drop_nulls, koord_scheduler, scoring_strategy_findings

DEFAULT_STRATEGY = {
    "type": "LeastAllocated",
    "resources": [
        {"name": name, "weight": 1}
        for name in (
            "koordinator.sh/gpu-memory-ratio",
            "koordinator.sh/gpu-memory",
            "koordinator.sh/rdma",
            "koordinator.sh/fpga",
        )
    ],
}
DEFAULT_TEMPLATES = {
    "configMapNamespace": "koordinator-system",
    "configMapName": "gpu-shared-resource-templates",
    "matchedResources": ["huawei.com/npu-core"],
}


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    drop_nulls(args.get("scoringStrategy"))
    args.setdefault("scoringStrategy", copy.deepcopy(DEFAULT_STRATEGY))
    args.setdefault("gpuSharedResourceTemplatesConfig", copy.deepcopy(DEFAULT_TEMPLATES))
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings = scoring_strategy_findings(
        args.get("scoringStrategy"), path_join(path, "scoringStrategy"), "scoring strategy"
    )
    allocator = args.get("allocator")
    if isinstance(allocator, str) and allocator:
        findings.append(
            warning(
                path_join(path, "allocator"),
                f"{json.dumps(allocator)} is ignored: the field is deprecated and "
                f"{koord_scheduler(reader)} always uses its built-in allocator",
                "koord.deviceshare.allocator",
                allocator,
            )
        )
    return findings


ARGS = ArgsKind("DeviceShareArgs", "DeviceShare", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
