"""JSON Schema loading and conversion of jsonschema errors into Kubernetes-style findings.

The schemas under ``limitguard/schemas/`` are the single source of structure (fields, types, enums, simple ranges);
they ship as package data. Two deliberate deviations from plain
jsonschema behaviour, both to match kube-scheduler's decoder:

* ``integer`` rejects floats such as ``1.0`` (Go refuses to decode 1.0 into an int32);
* unknown fields are reported one finding per field, with the full path of the field itself.

A constraint that a rule reports with a better message (what the scheduler would do with the value) is
marked ``"x-limitguard-rule": {"<keyword>": "<rule>"}`` beside it: editors apply it like any other, the
validator leaves it to that rule, so the value is reported once, by the rule.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.validators import extend

from limitguard.core.paths import path_join

from .fields.durations import GO_DURATION_PATTERN, parse_go_duration_ns
from .fields.findings import Finding, format_value, invalid, required, unsupported

MESSAGE_KEYWORD = "x-limitguard-message"
RULE_KEYWORD = "x-limitguard-rule"

# Hints for unknown fields that are real fields elsewhere (version drift) - more useful than "unknown".
_FIELD_HINTS: dict[str, str] = {
    "healthzBindAddress": "removed in kubescheduler.config.k8s.io/v1beta3; kube-scheduler serves health "
    "checks on its secure port (--bind-address / --secure-port flags)",
    "metricsBindAddress": "removed in kubescheduler.config.k8s.io/v1beta3; kube-scheduler serves metrics "
    "on its secure port (--bind-address / --secure-port flags)",
    "multiPoint": "the multiPoint extension point exists from kubescheduler.config.k8s.io/v1beta3 on",
    "delayCacheUntilActive": "only exists in kubescheduler.config.k8s.io/v1",
}


def _is_strict_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


DURATION_RANGE_KEYWORD = "x-go-duration-range"
_DEFAULT_PATTERN = Draft202012Validator.VALIDATORS["pattern"]


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's pattern, and for a Go duration also time.ParseDuration's int64 nanosecond range
    (the syntax matches "9223372036854775808ns", ParseDuration refuses it)."""
    errors = list(_DEFAULT_PATTERN(validator, pattern, instance, schema))
    yield from errors
    duration = pattern == GO_DURATION_PATTERN and isinstance(instance, str)
    if not errors and duration and parse_go_duration_ns(instance) is None:
        yield ValidationError(
            "out of range: a Go duration holds int64 nanoseconds "
            "(-2562047h47m16.854775808s to 2562047h47m16.854775807s)",
            validator=DURATION_RANGE_KEYWORD,
        )


_StrictValidator = extend(
    Draft202012Validator,
    validators={"pattern": _pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)


def schema_root() -> Any:
    """The packaged schema directory (a Traversable; works from a wheel and from a source checkout)."""
    return resources.files("limitguard") / "schemas"


@cache
def load_schema(relative_path: str) -> dict[str, Any]:
    """Parsed JSON of ``limitguard/schemas/<relative_path>``."""
    node = schema_root()
    for part in relative_path.split("/"):
        node = node / part
    return json.loads(node.read_text(encoding="utf-8"))


def config_schema_path(version: str) -> str:
    return f"kubescheduler-config-{version}.schema.json"


def args_schema_path(kind: str) -> str:
    return f"args/{kind}.schema.json"


@cache
def _validator(relative_path: str) -> Any:
    return _StrictValidator(load_schema(relative_path))


def config_validator(version: str) -> Any:
    return _validator(config_schema_path(version))


def args_validator(kind: str) -> Any:
    return _validator(args_schema_path(kind))


def schema_validator(relative_path: str) -> Any:
    """The strict validator of any schema under limitguard/schemas/ (an args kind's ``schema_path``)."""
    return _validator(relative_path)


def validate(validator: Any, instance: Any, base_path: str = "") -> list[Finding]:
    """All schema findings for ``instance``, with paths below ``base_path``, in document order."""
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for error in validator.iter_errors(instance):
        if _left_to_rule(error):
            continue
        for finding in _convert(error, base_path):
            # jsonschema raises one "required" error per missing property, each listing all of them
            if (finding.path, finding.message) not in seen:
                seen.add((finding.path, finding.message))
                findings.append(finding)
    return findings


def _left_to_rule(error: ValidationError) -> bool:
    """Whether the failed keyword is marked as reported by a rule (``RULE_KEYWORD``)."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    marked = schema.get(RULE_KEYWORD)
    return isinstance(marked, dict) and str(error.validator) in marked


def _error_path(base: str, error: ValidationError) -> str:
    return path_join(base, *(p if isinstance(p, int) else str(p) for p in error.absolute_path))


def _convert(error: ValidationError, base: str) -> Iterator[Finding]:
    path = _error_path(base, error)
    keyword = str(error.validator)
    schema = error.schema if isinstance(error.schema, dict) else {}
    value = error.instance
    rule = f"schema.{keyword}"

    if keyword == "additionalProperties" and isinstance(value, dict):
        known = set(schema.get("properties", {}))
        for extra in value:
            if str(extra) in known:
                continue
            yield _unknown_field(path_join(path, str(extra)), str(extra), known)
        return
    if keyword == "required" and isinstance(value, dict):
        for name in error.validator_value:
            if name not in value:
                yield required(path_join(path, name), "", "schema.required")
        return
    if keyword == DURATION_RANGE_KEYWORD:
        yield invalid(path, value, error.message, "schema.go-duration-range")
        return
    custom = schema.get(MESSAGE_KEYWORD)
    if custom:
        yield invalid(path, value, custom, rule)
        return
    if keyword == "enum":
        yield unsupported(path, value, [str(v) for v in error.validator_value], rule)
    elif keyword == "const":
        yield unsupported(path, value, [str(error.validator_value)], rule)
    elif keyword == "type":
        expected = error.validator_value
        names = expected if isinstance(expected, list) else [expected]
        yield invalid(path, value, f"must be of type {' or '.join(names)}, not {_json_type(value)}", rule)
    elif keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        yield invalid(path, value, _range_text(schema, value), rule)
    elif keyword == "minItems":
        yield required(path, f"at least {error.validator_value} item(s) must be specified", rule)
    elif keyword == "minLength":
        yield required(path, "must not be empty", rule)
    elif keyword == "pattern":
        yield invalid(path, value, f"must match the regular expression {error.validator_value}", rule)
    elif keyword == "propertyNames":
        yield invalid(path, value, "keys must not be empty", rule)
    else:  # pragma: no cover - the schemas only use the keywords above
        yield invalid(path, value, error.message, rule)


def _unknown_field(path: str, name: str, known: set[str]) -> Finding:
    detail = f"unknown field {json.dumps(name)}"
    hint = _FIELD_HINTS.get(name)
    if hint is None:
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        if close:
            hint = f"did you mean {json.dumps(close[0])}?"
    if hint:
        detail += f" ({hint})"
    return Finding("error", path, f"Forbidden: {detail}", "schema.unknown-field")


_INT_MAX = {2147483647: "32-bit", 9223372036854775807: "64-bit"}
_INT_MIN = {-2147483648: "32-bit", -9223372036854775808: "64-bit"}


def _range_text(schema: dict[str, Any], value: Any) -> str:
    """``not in valid range [1, 100]`` like kube-scheduler; int32/int64 limits are reported as overflow."""
    low, high = schema.get("minimum"), schema.get("maximum")
    low_open, high_open = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(value, int):
        if high in _INT_MAX and value > high:
            return f"does not fit in a {_INT_MAX[high]} integer"
        if low in _INT_MIN and value < low:
            return f"does not fit in a {_INT_MIN[low]} integer"
    if low is not None and low not in _INT_MIN:
        left = f"[{low}"
    else:
        left = f"({low_open}" if low_open is not None else "(-inf"
    if high is not None and high not in _INT_MAX:
        right = f"{high}]"
    else:
        right = f"{high_open})" if high_open is not None else "inf)"
    return f"not in valid range {left}, {right}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


__all__ = [
    "args_validator",
    "config_validator",
    "format_value",
    "load_schema",
    "schema_validator",
    "validate",
]
