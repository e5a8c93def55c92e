"""The TrimaranSpec every Trimaran args kind inlines (metricProvider, watcherAddress): apis/config/v1
SetDefaultTrimaranSpec and pkg/trimaran/collector.go checkSpecs, run by each plugin's constructor (tag v0.34.7).

With a watcherAddress the plugin reads load-watcher there and ignores metricProvider; without one it reads
metrics itself through metricProvider, whose type must then be one of three.
"""

from __future__ import annotations

import json
import re
from typing import Any

from limitguard.core.paths import path_join

from ...report import Finding, invalid, warning
from ..common import as_dict
from .common import SCHEDULER, drop_nulls

PROVIDERS = ("KubernetesMetricsServer", "Prometheus", "SignalFx")

# strconv.ParseFloat's grammar: decimal, hexadecimal with a p exponent, inf/infinity (signed), nan.
_DECIMAL = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_HEX = re.compile(r"^[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?\d+$")
_SPECIAL = re.compile(r"^(?:[+-]?(?:inf|infinity)|nan)$", re.IGNORECASE)


def parses_as_go_float(text: str) -> bool:
    """Whether Go's strconv.ParseFloat(text, 64) succeeds (an overflow to infinity is an error there)."""
    if _SPECIAL.match(text):
        return True
    if _HEX.match(text):
        return True
    if not _DECIMAL.match(text):
        return False
    return abs(float(text)) != float("inf")


def watcher_address(args: dict[str, Any]) -> str:
    value = args.get("watcherAddress")
    return value if isinstance(value, str) else ""


def default_spec(args: dict[str, Any], path: str) -> list[Finding]:
    """SetDefaultTrimaranSpec; warns when the defaulting turns TLS verification off."""
    provider = args.get("metricProvider")
    if provider is None:
        provider = args["metricProvider"] = {}
    if not isinstance(provider, dict):
        return []
    drop_nulls(provider)
    if "watcherAddress" not in args and provider.get("type", "") == "":
        provider["type"] = "KubernetesMetricsServer"
    findings: list[Finding] = []
    if provider.get("type") == "Prometheus" and "insecureSkipVerify" not in provider:
        provider["insecureSkipVerify"] = True
        if not watcher_address(args):
            findings.append(
                warning(
                    path_join(path, "metricProvider", "insecureSkipVerify"),
                    "not set: it defaults to true, so the Prometheus server's TLS certificate is not verified; "
                    "set it explicitly",
                    "sigs.trimaran.insecure-default",
                )
            )
    return findings


def check_spec(args: dict[str, Any], path: str) -> list[Finding]:
    """checkSpecs: without a watcher, the provider type must be known; with one, metricProvider is unused."""
    provider = as_dict(args.get("metricProvider"))
    provider_path = path_join(path, "metricProvider")
    if watcher_address(args):
        if provider:  # defaulting adds nothing here unless the user gave a type
            return [
                warning(
                    provider_path,
                    f"ignored: watcherAddress is set, so the plugin reads load-watcher at "
                    f"{json.dumps(watcher_address(args))} instead",
                    "sigs.trimaran.provider-ignored",
                )
            ]
        return []
    kind = provider.get("type", "")
    if isinstance(kind, str) and kind not in PROVIDERS:
        listed = ", ".join(json.dumps(p) for p in PROVIDERS)
        return [
            invalid(
                path_join(provider_path, "type"),
                kind,
                f"invalid MetricProvider.Type: must be one of {listed} when watcherAddress is empty "
                f"({SCHEDULER} does not start)",
                "sigs.trimaran.provider-type",
            )
        ]
    return []
