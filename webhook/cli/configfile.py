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

SCHEMA_DIR = Path(str(resources.files("limitguard") / "_schemas"))


@cache
def schema_validator(name: str) -> Draft202012Validator:
    """A validator for one of the JSON Schemas shipped in `schemas/`."""
    schema = json.loads((SCHEMA_DIR / name).read_text())
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def parse_config(raw: Any) -> Config:
    """Validate a decoded document against the schema, then build the Config."""
    if raw is None:
        raw = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    # The scheduler-config validator's schema findings: field paths, Kubernetes-style messages, and
    # "did you mean" for misspelled fields - the same reading experience as `limitguard validate`.
    from limitguard.schedcfg import schemas as schedcfg_schemas
    from limitguard.schedcfg.rules.releases import ReleaseError, release_for

    findings = schedcfg_schemas.validate(schema_validator("limitguard-config.schema.json"), raw)
    if findings:
        raise ConfigError([str(finding) if finding.path else f"<root>: {finding}" for finding in findings])
    validation = raw.get("schedulerConfigValidation") or {}
    try:
        # a configured release must be a supported one, with gates it accepts (a cluster's /version
        # outside the range is clamped instead: the operator cannot choose it)
        if validation.get("kubernetesVersion"):
            release_for(validation["kubernetesVersion"], validation.get("featureGates") or {})
    except ReleaseError as error:
        raise ConfigError([f"schedulerConfigValidation.kubernetesVersion: {error}"]) from None
    config = config_from_mapping(raw)
    if raw.get("extender") is None:
        return config
    from limitguard.extender.config import ExtenderConfigError, extender_config_from_mapping

    try:
        extender = extender_config_from_mapping(raw["extender"])
    except ExtenderConfigError as error:
        raise ConfigError(error.problems) from None
    return dataclasses.replace(config, scorers=extender.scorers)


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
