"""Kubernetes LabelSelector: validated as the apiserver validates one, matched as client-go matches.

Validation follows k8s.io/apimachinery v0.36.3 ValidateLabelSelector (pkg/apis/meta/v1/validation):
label keys are qualified names, values are label values (at most 63 characters, alphanumeric at both
ends, `-`, `_` and `.` inside, or empty), In/NotIn need values, Exists/DoesNotExist take none.
Matching follows LabelSelectorAsSelector (pkg/apis/meta/v1/helpers.go) and labels.Requirement.Matches:
`{}` selects every set of labels; NotIn also matches labels without the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.core.fielderrors import FieldError
from limitguard.core.names import is_label_value, is_qualified_name
from limitguard.core.paths import path_join
from limitguard.core.text import clip

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_KEY_PROBLEM = (
    "must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 characters of "
    "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
)
_VALUE_PROBLEM = (
    "must be at most 63 characters of alphanumerics, '-', '_' or '.', starting and ending with an "
    "alphanumeric (or empty)"
)


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist (matchLabels entries are In with one value)
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if self.operator == "Exists":
            return value is not None
        return value is None


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A compiled selector: every requirement must match (no requirement: every node matches)."""

    requirements: tuple[LabelRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)


def _quoted(value: Any) -> str:
    return clip(repr(value))


def parse_label_selector(raw: Any, where: str) -> tuple[LabelSelector, list[FieldError]]:
    """The selector and its problems, each `field.path: what is wrong` (an empty list: valid)."""
    problems: list[FieldError] = []
    if not isinstance(raw, Mapping):
        return LabelSelector(), [
            FieldError(where, "must be a label selector (matchLabels, matchExpressions)")
        ]
    requirements: list[LabelRequirement] = []
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        problems.append(FieldError(path_join(where, "matchLabels"), "must be a map of label key to value"))
        match_labels = {}
    for key, value in match_labels.items():
        here = path_join(where, "matchLabels", str(key))
        if not is_qualified_name(key):
            problems.append(
                FieldError(path_join(where, "matchLabels"), f"Invalid value: {_quoted(key)}: {_KEY_PROBLEM}")
            )
        elif not is_label_value(value):
            problems.append(FieldError(here, f"Invalid value: {_quoted(value)}: {_VALUE_PROBLEM}"))
        else:
            requirements.append(LabelRequirement(key, "In", frozenset({value})))
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        problems.append(FieldError(path_join(where, "matchExpressions"), "must be a list"))
        expressions = []
    for index, expression in enumerate(expressions):
        requirement, found = _requirement(expression, path_join(where, "matchExpressions", index))
        problems += found
        if requirement is not None:
            requirements.append(requirement)
    return LabelSelector(tuple(requirements)), problems


def _requirement(raw: Any, where: str) -> tuple[LabelRequirement | None, list[FieldError]]:
    if not isinstance(raw, Mapping):
        return None, [FieldError(where, "must be an object with key, operator and values")]
    problems: list[FieldError] = []
    key, operator, values = raw.get("key"), raw.get("operator"), raw.get("values") or []
    if not is_qualified_name(key):
        problems.append(FieldError(path_join(where, "key"), f"Invalid value: {_quoted(key)}: {_KEY_PROBLEM}"))
    if operator not in OPERATORS:
        supported = ", ".join(f'"{name}"' for name in OPERATORS)
        problems.append(
            FieldError(
                path_join(where, "operator"),
                f"Unsupported value: {_quoted(operator)}: supported values: {supported}",
            )
        )
    if not isinstance(values, list):
        return None, [*problems, FieldError(path_join(where, "values"), "must be a list of label values")]
    if operator in ("In", "NotIn") and not values:
        problems.append(
            FieldError(
                path_join(where, "values"),
                f"Required value: must be specified when `operator` is '{operator}'",
            )
        )
    if operator in ("Exists", "DoesNotExist") and values:
        problems.append(
            FieldError(
                path_join(where, "values"), f"Forbidden: may not be specified when `operator` is '{operator}'"
            )
        )
    for index, value in enumerate(values):
        if not is_label_value(value):
            problems.append(
                FieldError(
                    path_join(where, "values", index), f"Invalid value: {_quoted(value)}: {_VALUE_PROBLEM}"
                )
            )
    if problems:
        return None, problems
    return LabelRequirement(key, operator, frozenset(values)), []
