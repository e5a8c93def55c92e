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

from limitguard.core.config import Config, ConfigError
from limitguard.core.configread import read_config
from limitguard.core.fielderrors import FieldError, FieldErrors
from limitguard.core.paths import path_join
from limitguard.core.ratios import PERCENT_FORMS, RatioError, parse_ratio_percent
from limitguard.core.text import clip
from limitguard.extender.config import read_extender_config
from limitguard.schedcfg import schemas as schedcfg_schemas
from limitguard.schedcfg.schedulers import setting_problems

RATIO_FIELD = "limitAware.defaultLimitToAllocatableRatio"
RATIO_EXAMPLE = 'e.g. {cpu: 150, memory: "120%"}'
RATIO_FORMS = f'accepted: an integer percent (150) or a percent string ("150%"), {RATIO_EXAMPLE}'
RELEASE_FIELD = "schedulerConfigValidation.kubernetesVersion"
EMPTY_DOCUMENT = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}

SCHEMA_DIR = Path(str(resources.files("limitguard") / "schemas"))


@cache
def schema_validator(name: str) -> Draft202012Validator:
    """A validator for one of the JSON Schemas shipped in `limitguard/schemas/`."""
    schema = json.loads((SCHEMA_DIR / name).read_text())
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def parse_config(raw: Any) -> Config:
    """The Config of a decoded document; raises ConfigError with every problem of every section."""
    config, errors = _read(raw)
    if errors:
        raise ConfigError(errors.texts())
    return config


def config_errors(raw: Any) -> FieldErrors:
    """Every problem of a decoded document in one run, each `path: problem` (`limitguard validate`)."""
    return _read(raw)[1]


def _read(raw: Any) -> tuple[Config, FieldErrors]:
    """The Config and every problem, found in one run as kube-scheduler aggregates its
    field.ErrorList: the JSON Schema's, then each section's rules (the release, the limit-aware
    section and its pools, the defaults, the replicas, the extender's scorers and their args). A rule
    that needs a value the schema refused skips only what depends on that value. The Config means
    something only when there is no problem."""
    if raw is None:
        raw = EMPTY_DOCUMENT
    errors = FieldErrors()
    # The scheduler-config validator's schema findings: field paths, Kubernetes-style messages, and
    # "did you mean" for misspelled fields - the same reading experience as `limitguard validate`.
    # A ratio the schema refuses is explained by the one ratio parser (the node annotation's), with
    # the accepted forms, instead of "is not valid under any of the given schemas".
    ratios = ratio_problems(raw)
    for finding in schedcfg_schemas.validate(schema_validator("limitguard-config.schema.json"), raw):
        explained = ratios.get(finding.path)
        errors.add(finding.path, explained.detail if explained is not None else finding.message)
    errors.settle()
    if not isinstance(raw, dict):
        return Config(), errors
    _check_release(raw, errors)
    config = read_config(raw, errors)
    extender = read_extender_config(raw.get("extender"), errors)
    return dataclasses.replace(config, scorers=extender.scorers), errors


def _check_release(raw: dict[str, Any], errors: FieldErrors) -> None:
    """A configured release must be a supported one, with gates it accepts, and a
    `kube-scheduler@VERSION` must agree with it, as `limitguard validate` refuses the same flags (a
    cluster's /version outside the range is clamped instead: the operator cannot choose it)."""
    validation = raw.get("schedulerConfigValidation")
    if not isinstance(validation, dict) or errors.invalid(
        RELEASE_FIELD, "schedulerConfigValidation.scheduler"
    ):
        return
    gates = {} if errors.invalid("schedulerConfigValidation.featureGates") else validation.get("featureGates")
    for path, detail in setting_problems(
        validation.get("kubernetesVersion"), gates or {}, validation.get("scheduler")
    ):
        errors.add(path, detail)


def ratio_problems(raw: Any) -> dict[str, FieldError]:
    """Field path -> what is wrong and the accepted forms, for each malformed ratio value (the cluster
    default's map and every node pool's)."""
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
    problems: dict[str, FieldError] = {}
    for field, ratios in maps:
        problems.update(_map_problems(field, ratios))
    return problems


def _map_problems(field: str, ratios: Any) -> dict[str, FieldError]:
    if not isinstance(ratios, dict):
        return {field: FieldError(field, f"expected a map of resource name to percent; {RATIO_FORMS}")}
    problems = {}
    for resource, value in ratios.items():
        where = path_join(field, str(resource))
        try:
            parse_ratio_percent(value)
        except RatioError as error:
            forms = RATIO_EXAMPLE if PERCENT_FORMS in str(error) else RATIO_FORMS
            problems[where] = FieldError(where, f"{error}; {forms}")
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
    except (yaml.YAMLError, ValueError) as error:  # ValueError: an integer past Python's 4,300 digits
        raise ConfigError([f"{path}: not valid YAML: {clip(str(error), 200)}"]) from None
    return parse_config(raw)
