"""Reading limitguard's configuration file: YAML, JSON Schema, then the typed core config."""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from limitguard.core.config import Config, ConfigError, config_from_mapping
from limitguard.core.paths import path_join
from limitguard.core.ratios import RatioError, parse_ratio_percent

RATIO_FIELD = "limitAware.defaultLimitToAllocatableRatio"
RATIO_EXAMPLE = 'e.g. {cpu: 150, memory: "120%"}'
RATIO_FORMS = f'accepted: an integer percent (150) or a percent string ("150%"), {RATIO_EXAMPLE}'

SCHEMA_DIR = Path(str(resources.files("limitguard") / "schemas"))


@cache
def schema_validator(name: str) -> Draft202012Validator:
    """A validator for one of the JSON Schemas shipped in `limitguard/schemas/`."""
    schema = json.loads((SCHEMA_DIR / name).read_text())
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def parse_config(raw: Any) -> Config:
    """Validate a decoded document against the schema, then build the Config."""
    if raw is None:
        raw = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    # The scheduler-config validator's schema findings: field paths, Kubernetes-style messages, and
    # "did you mean" for misspelled fields - the same reading experience as `limitguard validate`.
    from limitguard.schedcfg import schemas as schedcfg_schemas
    from limitguard.schedcfg.schedulers import setting_problems

    findings = schedcfg_schemas.validate(schema_validator("limitguard-config.schema.json"), raw)
    if findings:
        # A ratio the schema refuses is explained by the one ratio parser (the node annotation's),
        # with the accepted forms, instead of "is not valid under any of the given schemas".
        ratios = ratio_problems(raw)
        raise ConfigError(
            [
                ratios.get(finding.path) or (str(finding) if finding.path else f"<root>: {finding}")
                for finding in findings
            ]
        )
    validation = raw.get("schedulerConfigValidation") or {}
    # a configured release must be a supported one, with gates it accepts, as `limitguard validate`
    # refuses the same flags (a cluster's /version outside the range is clamped instead: the operator
    # cannot choose it)
    problems = setting_problems(
        validation.get("kubernetesVersion"), validation.get("featureGates") or {}, validation.get("scheduler")
    )
    if problems:
        raise ConfigError(problems)
    config = config_from_mapping(raw)
    if raw.get("extender") is None:
        return config
    from limitguard.extender.config import ExtenderConfigError, extender_config_from_mapping

    try:
        extender = extender_config_from_mapping(raw["extender"])
    except ExtenderConfigError as error:
        raise ConfigError(error.problems) from None
    return dataclasses.replace(config, scorers=extender.scorers)


def ratio_problems(raw: Any) -> dict[str, str]:
    """Field path -> `path: what is wrong; the accepted forms` for each malformed ratio value (the
    cluster default's map and every node pool's)."""
    limit_aware = raw.get("limitAware") if isinstance(raw, dict) else None
    if not isinstance(limit_aware, dict):
        return {}
    maps = []
    if "defaultLimitToAllocatableRatio" in limit_aware:
        maps.append((RATIO_FIELD, limit_aware["defaultLimitToAllocatableRatio"]))
    pools = limit_aware.get("nodePools")
    for index, pool in enumerate(pools if isinstance(pools, list) else ()):
        if isinstance(pool, dict) and "limitToAllocatableRatio" in pool:
            maps.append(
                (f"limitAware.nodePools[{index}].limitToAllocatableRatio", pool["limitToAllocatableRatio"])
            )
    problems: dict[str, str] = {}
    for field, ratios in maps:
        problems.update(_map_problems(field, ratios))
    return problems


def _map_problems(field: str, ratios: Any) -> dict[str, str]:
    if not isinstance(ratios, dict):
        return {field: f"{field}: expected a map of resource name to percent; {RATIO_FORMS}"}
    problems = {}
    for resource, value in ratios.items():
        where = path_join(field, str(resource))
        try:
            parse_ratio_percent(value)
        except RatioError as error:
            forms = RATIO_EXAMPLE if "percent string" in str(error) else RATIO_FORMS
            problems[where] = f"{where}: {error}; {forms}"
    return problems


def load_config(path: str | Path | None) -> Config:
    """The configuration in *path*, or the defaults when no file is given."""
    if path is None:
        return Config()
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise ConfigError([f"{path}: cannot read: {error.strerror}"]) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError([f"{path}: not valid YAML: {error}"]) from None
    return parse_config(raw)
