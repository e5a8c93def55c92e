"""The TrimaranSpec every Trimaran args kind inlines (metricProvider, watcherAddress): apis/config/v1
SetDefaultTrimaranSpec and pkg/trimaran/collector.go checkSpecs, run by each plugin's constructor (tag v0.34.7).
insecureSkipVerify reaches load-watcher's Prometheus client only as TLS configuration (collector.go:70),
so its default matters only for an https address.

With a watcherAddress the plugin reads load-watcher there and ignores metricProvider; without one it reads
metrics itself through metricProvider, whose type must then be one of three.
"""

from __future__ import annotations

import json
import re
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...fields.values import as_dict
from ...tables.readers import Reader
from .common import drop_nulls, sigs_scheduler

PROVIDERS = ("KubernetesMetricsServer", "Prometheus", "SignalFx")

_SPECIAL = re.compile(r"^(?:[+-]?(?:inf|infinity)|nan)$", re.IGNORECASE)
_HEX_DIGITS = frozenset("0123456789abcdef")
_DEC_DIGITS = frozenset("0123456789")


def _digits_ok(part: str, digits: frozenset[str], point: bool) -> bool:
    """Digits and underscores, at least one digit, and (``point``) at most one '.'."""
    if point and part.count(".") > 1:
        return False
    chars = set(part) - {"_", "."} if point else set(part) - {"_"}
    return bool(chars) and chars <= digits


def _underscores_ok(text: str) -> bool:
    """Go's strconv underscoreOK: an underscore only between digits (a base prefix counts as one)."""
    body = text[1:] if text[:1] in "+-" else text
    hex_prefix = body[:2].lower() == "0x"
    saw, rest = ("0", body[2:]) if hex_prefix else ("^", body)
    for char in rest.lower():
        if char in _DEC_DIGITS or (hex_prefix and char in _HEX_DIGITS):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def parses_as_go_float(text: str) -> bool:
    """Whether Go's strconv.ParseFloat(text, 64) succeeds: decimal or hexadecimal (with a p exponent)
    literals, underscores between digits, inf/infinity (signed) and nan; an overflow is an error there.
    Linear in the length of ``text`` (it comes from the network)."""
    if _SPECIAL.match(text):
        return True
    body = text[1:] if text[:1] in "+-" else text
    hex_form = body[:2].lower() == "0x"
    if hex_form:
        body = body[2:]
    mantissa, marker, exponent = body.lower().partition("p" if hex_form else "e")
    if not _digits_ok(mantissa, _HEX_DIGITS if hex_form else _DEC_DIGITS, point=True):
        return False
    if hex_form and not marker:
        return False
    if marker and not _digits_ok(
        exponent[1:] if exponent[:1] in "+-" else exponent, _DEC_DIGITS, point=False
    ):
        return False
    if "_" in text and not _underscores_ok(text):
        return False
    plain = text.replace("_", "")
    try:
        value = float.fromhex(plain) if hex_form else float(plain)
    except (OverflowError, ValueError):
        return False
    return abs(value) != float("inf")


def watcher_address(args: dict[str, Any]) -> str:
    value = args.get("watcherAddress")
    return value if isinstance(value, str) else ""


def _https(address: Any) -> bool:
    """Whether the Prometheus client would speak TLS to ``address`` (only an https URL does)."""
    return isinstance(address, str) and address.lower().startswith("https://")


def default_spec(args: dict[str, Any], path: str) -> list[Finding]:
    """SetDefaultTrimaranSpec; warns when the defaulting turns TLS verification off for an https address
    (an http:// one, as in the plugins' READMEs and manifests, has no certificate to verify)."""
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
        if not watcher_address(args) and _https(provider.get("address")):
            findings.append(
                warning(
                    path_join(path, "metricProvider", "insecureSkipVerify"),
                    "not set: it defaults to true, so the Prometheus server's TLS certificate is not verified; "
                    "set it explicitly",
                    "sigs.trimaran.insecure-default",
                )
            )
    return findings


def check_spec(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
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
                f"({sigs_scheduler(reader)} does not start)",
                "sigs.trimaran.provider-type",
            )
        ]
    return []
