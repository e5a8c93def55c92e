"""One KubeSchedulerConfiguration judged in kube-scheduler's order: decode (the schema), default,
validate (validation.go and the plugin args), then the framework's plugin checks; and the verdicts
on an API version the reading scheduler does not serve."""

from __future__ import annotations

from typing import Any

from limitguard.core.paths import path_join

from . import schemas
from .fields.findings import Finding, invalid, warning
from .rules import config as config_rules
from .rules import framework, queue_sort
from .rules.defaults import apply_defaults, plugin_weight_warnings
from .rules.plugin_args import check_plugin_configs
from .tables.api import api_version
from .tables.readers import DEFAULT_READER, Reader
from .tables.releases import API_REMOVED_IN, Release


def validate_config(config: dict[str, Any], version: str, reader: Reader = DEFAULT_READER) -> list[Finding]:
    """kube-scheduler's order for one configuration of a served ``version``: decode (schema), default,
    validate (validation.go and the args), then the framework's plugin checks."""
    findings = schemas.validate(schemas.config_validator(version), config)
    defaulted, warnings = apply_defaults(config)
    findings += warnings
    findings += config_rules.check_config(defaulted, reader)
    raw_profiles = defaulted.get("profiles")
    profiles = [
        p if isinstance(p, dict) else {} for p in (raw_profiles if isinstance(raw_profiles, list) else [])
    ]
    for i, profile in enumerate(profiles):
        findings += plugin_weight_warnings(profile, path_join("profiles", i))
        findings += framework.check_profile(profile, path_join("profiles", i), reader)
    findings += queue_sort.check_common_queue_sort(profiles, reader)
    findings += check_plugin_configs(config, version, reader)
    return findings


def not_served(api_version_text: str, version: str, reader: Reader) -> Finding:
    return invalid(
        "apiVersion",
        api_version_text,
        f"not served by {reader.label} (removed in Kubernetes 1.{API_REMOVED_IN[version]}); "
        f"migrate to {api_version('v1')} (other findings below are from the {version} schema, to help the move)",
        "config.api-version-not-served",
    )


def served_but_unchecked(api_version_text: str, reader: str, release: Release, built_on: int) -> Finding:
    """A build on a Kubernetes minor older than limitguard's tables still serves an API version those
    tables' releases no longer do (koord-scheduler v1.7.0 on 1.28: v1beta3): it starts, limitguard
    cannot judge the file."""
    return warning(
        "apiVersion",
        f"{api_version_text} is served by {reader} (built on Kubernetes 1.{built_on}), but limitguard's "
        f"rules start at Kubernetes {release.name}, which no longer serves it: the file is not checked; "
        f"migrate to {api_version('v1')}",
        "config.api-version-unchecked",
    )
