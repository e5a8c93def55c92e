"""CoschedulingArgs of scheduler-plugins (apis/config/v1 SetDefaults_CoschedulingArgs,
apis/config/validation ValidateCoschedulingArgs, called by the plugin's constructor; tag v0.34.7)."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls

DEFAULTS = {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 10}
#: pkg/util/podgroup.go DefaultWaitTime: the wait used when the configured one is 0.
DEFAULT_WAIT_SECONDS = 60


def default(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    findings: list[Finding] = []
    if as_go_int(args.get("permitWaitingTimeSeconds")) == 0:
        findings.append(
            warning(
                path_join(path, "permitWaitingTimeSeconds"),
                f"0 does not mean no wait: pods of a gang wait the default {DEFAULT_WAIT_SECONDS} s for "
                "their siblings at Permit (a PodGroup's scheduleTimeoutSeconds still wins)",
                "sigs.coscheduling.zero-wait",
                0,
            )
        )
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    return findings


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    for name in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
        value = as_go_int(args.get(name))
        if value is not None and value < 0:
            findings.append(
                invalid(
                    path_join(path, name),
                    value,
                    "must be greater than or equal to 0",
                    "sigs.coscheduling.negative",
                )
            )
    percentage = as_go_int(args.get("podGroupRejectPercentage"), 32)
    if percentage is not None and not 0 <= percentage <= 100:
        findings.append(
            invalid(
                path_join(path, "podGroupRejectPercentage"),
                percentage,
                "must be between 0 and 100",
                "sigs.coscheduling.reject-percentage",
            )
        )
    return findings


ARGS = ArgsKind("CoschedulingArgs", "Coscheduling", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
