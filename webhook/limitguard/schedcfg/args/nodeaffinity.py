"""NodeAffinityArgs: addedAffinity is a node selector; its terms follow the Pod API's rules."""

from __future__ import annotations

import re
from typing import Any

from limitguard.core.names import is_qualified_name
from limitguard.core.paths import path_join

from ..fields.findings import Finding, forbidden, invalid, required
from ..fields.values import as_dict, as_list
from ..tables.readers import Reader
from .kind import ArgsKind


def _check_node_selector_term(term: Any, path: str) -> list[Finding]:
    findings: list[Finding] = []
    term = as_dict(term)
    for i, req in enumerate(as_list(term.get("matchExpressions"))):
        req = as_dict(req)
        req_path = path_join(path, "matchExpressions", i)
        key = req.get("key")
        if isinstance(key, str) and not is_qualified_name(key):
            findings.append(
                invalid(
                    path_join(req_path, "key"),
                    key,
                    "must be a qualified name (label key)",
                    "node-affinity.key",
                )
            )
        findings += _check_requirement_values(req, req_path)
    for i, req in enumerate(as_list(term.get("matchFields"))):
        req = as_dict(req)
        req_path = path_join(path, "matchFields", i)
        if isinstance(req.get("key"), str) and req["key"] != "metadata.name":
            findings.append(unsupported_field(path_join(req_path, "key"), req["key"]))
        operator = req.get("operator")
        values = as_list(req.get("values"))
        if isinstance(operator, str) and operator not in ("In", "NotIn"):
            findings.append(
                invalid(
                    path_join(req_path, "operator"),
                    operator,
                    'matchFields only supports "In" and "NotIn"',
                    "node-affinity.match-fields",
                )
            )
        elif len(values) != 1:
            findings.append(
                invalid(
                    path_join(req_path, "values"),
                    values,
                    "must have exactly one value for matchFields",
                    "node-affinity.match-fields",
                )
            )
    return findings


def unsupported_field(path: str, value: str) -> Finding:
    return invalid(
        path, value, 'matchFields only supports the key "metadata.name"', "node-affinity.match-fields"
    )


def _check_requirement_values(req: dict[str, Any], req_path: str) -> list[Finding]:
    operator = req.get("operator")
    values = as_list(req.get("values"))
    values_path = path_join(req_path, "values")
    if operator in ("In", "NotIn") and not values:
        return [
            required(values_path, f"must be specified when operator is {operator}", "node-affinity.values")
        ]
    if operator in ("Exists", "DoesNotExist") and values:
        return [
            forbidden(
                values_path, f"may not be specified when operator is {operator}", "node-affinity.values"
            )
        ]
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            return [
                invalid(
                    values_path,
                    values,
                    f"must have exactly one value when operator is {operator}",
                    "node-affinity.values",
                )
            ]
        if not (isinstance(values[0], str) and re.fullmatch(r"[-+]?[0-9]+", values[0])):
            return [
                invalid(
                    path_join(values_path, 0),
                    values[0],
                    f"must be an integer when operator is {operator}",
                    "node-affinity.values",
                )
            ]
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    affinity = as_dict(args.get("addedAffinity"))
    base = path_join(path, "addedAffinity")
    findings: list[Finding] = []
    required_selector = as_dict(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for i, term in enumerate(as_list(required_selector.get("nodeSelectorTerms"))):
        findings += _check_node_selector_term(
            term, path_join(base, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", i)
        )
    for i, preferred in enumerate(as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        findings += _check_node_selector_term(
            as_dict(preferred).get("preference"),
            path_join(base, "preferredDuringSchedulingIgnoredDuringExecution", i, "preference"),
        )
    return findings


ARGS = ArgsKind("NodeAffinityArgs", "NodeAffinity", validate)
