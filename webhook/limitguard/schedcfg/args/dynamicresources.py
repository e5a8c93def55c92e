"""DynamicResourcesArgs (Kubernetes 1.34+): filterTimeout and, from 1.35, bindingTimeout.

Both fields are feature-gated: filterTimeout needs DRASchedulerFilterTimeout (beta, on) and must not be
negative; bindingTimeout needs DRADeviceBindingConditions (alpha and off before 1.36, beta and on from
1.36) and DRAResourceClaimDeviceStatus (on from 1.33, locked on from 1.37) and must be at least 1s.
Setting a field whose gate is off is an error, as in kube-scheduler.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from ..fields.durations import parse_go_duration
from ..fields.findings import Finding, forbidden, invalid
from ..tables.readers import Reader
from .kind import ArgsKind


def _binding_gates(reader: Reader) -> bool:
    return reader.release.enabled("DRADeviceBindingConditions") and reader.release.enabled(
        "DRAResourceClaimDeviceStatus"
    )


def default(args: dict[str, Any], _path: str, reader: Reader) -> list[Finding]:
    """filterTimeout defaults to 10s with its gate on. An omitted bindingTimeout stays unset (the plugin
    uses 10m when it starts), so validation never sees a default it would have to forbid."""
    if args.get("filterTimeout") is None and reader.release.enabled("DRASchedulerFilterTimeout"):
        args["filterTimeout"] = "10s"
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    filter_path, binding_path = path_join(path, "filterTimeout"), path_join(path, "bindingTimeout")
    filter_timeout = args.get("filterTimeout")
    if reader.release.enabled("DRASchedulerFilterTimeout"):
        seconds = parse_go_duration(filter_timeout)
        if seconds is not None and seconds < 0:
            findings.append(
                invalid(filter_path, filter_timeout, "must be zero or positive", "dra.filter-timeout")
            )
    elif filter_timeout is not None:
        findings.append(
            forbidden(filter_path, "DRASchedulerFilterTimeout feature gate is disabled", "dra.filter-timeout")
        )
    if not reader.release.has("dra.binding-timeout-field"):
        if "bindingTimeout" in args:
            findings.append(
                forbidden(
                    binding_path,
                    f'unknown field "bindingTimeout" (DynamicResourcesArgs has it from Kubernetes 1.35; '
                    f"this is {reader.release.name})",
                    "schema.unknown-field",
                )
            )
        return findings
    binding_timeout = args.get("bindingTimeout")
    if _binding_gates(reader):
        seconds = parse_go_duration(binding_timeout)
        if seconds is not None and seconds < 1:
            findings.append(
                invalid(binding_path, binding_timeout, "must be at least 1 second", "dra.binding-timeout")
            )
    elif binding_timeout is not None:
        findings.append(
            forbidden(
                binding_path,
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
                "dra.binding-timeout",
            )
        )
    return findings


ARGS = ArgsKind("DynamicResourcesArgs", "DynamicResources", validate, default, since_minor=34)
