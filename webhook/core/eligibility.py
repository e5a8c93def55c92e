"""Which nodes could the scheduler place an unbound pod on? (SPEC 3)

Mirrors the scheduler's required filters that depend only on the pod and the node object:
nodeSelector, required node affinity (matchExpressions on labels, matchFields on metadata.name),
taints with effect NoSchedule/NoExecute against tolerations, and `spec.unschedulable`.
A placement is compiled once per request, then tested against thousands of nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limitguard.core.podlimits import PodSpecError

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class NodeTraits:
    """What eligibility needs to know about a node."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


LabelTest = Callable[[Mapping[str, str], str], bool]


def _as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PodSpecError(f"{where} is not a list")
    return value


def _as_map(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PodSpecError(f"{where} is not an object")
    return value


def _integer(text: Any) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _requirement(raw: Any, where: str, field_lookup: bool) -> LabelTest:
    """Compile one NodeSelectorRequirement into a test over (labels, node name)."""
    requirement = _as_map(raw, where)
    key = requirement.get("key")
    operator = requirement.get("operator")
    values = [str(value) for value in _as_list(requirement.get("values"), f"{where}.values")]
    if not isinstance(key, str):
        raise PodSpecError(f"{where}.key is not a string")

    def lookup(labels: Mapping[str, str], node_name: str) -> str | None:
        if field_lookup:
            return node_name if key == "metadata.name" else None
        return labels.get(key)

    if operator == "In":
        allowed = frozenset(values)
        return lambda labels, name: lookup(labels, name) in allowed
    if operator == "NotIn":
        denied = frozenset(values)
        return lambda labels, name: lookup(labels, name) not in denied
    if operator == "Exists":
        return lambda labels, name: lookup(labels, name) is not None
    if operator == "DoesNotExist":
        return lambda labels, name: lookup(labels, name) is None
    if operator in ("Gt", "Lt"):
        bound = _integer(values[0]) if len(values) == 1 else None
        if bound is None:
            raise PodSpecError(f"{where}: {operator} needs exactly one integer value")
        greater = operator == "Gt"

        def compare(labels: Mapping[str, str], name: str) -> bool:
            number = _integer(lookup(labels, name))
            return number is not None and (number > bound if greater else number < bound)

        return compare
    raise PodSpecError(f"{where}.operator: unsupported value {operator!r}")


def _term(raw: Any, where: str) -> Callable[[Mapping[str, str], str], bool]:
    term = _as_map(raw, where)
    tests = [
        _requirement(item, f"{where}.matchExpressions[{index}]", field_lookup=False)
        for index, item in enumerate(_as_list(term.get("matchExpressions"), f"{where}.matchExpressions"))
    ] + [
        _requirement(item, f"{where}.matchFields[{index}]", field_lookup=True)
        for index, item in enumerate(_as_list(term.get("matchFields"), f"{where}.matchFields"))
    ]
    if not tests:  # an empty term selects no node, as in the scheduler
        return lambda labels, name: False
    return lambda labels, name: all(test(labels, name) for test in tests)


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return not self.key or self.key == taint.key
        return self.key == taint.key and self.value == taint.value


class Placement:
    """The pod's node constraints, compiled."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        selector = _as_map(spec.get("nodeSelector"), "spec.nodeSelector")
        self._selector = tuple((str(key), str(value)) for key, value in selector.items())
        affinity = _as_map(spec.get("affinity"), "spec.affinity")
        node_affinity = _as_map(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        self._terms: tuple[Callable[[Mapping[str, str], str], bool], ...] | None = None
        if required is not None:
            where = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            terms = _as_list(_as_map(required, where).get("nodeSelectorTerms"), f"{where}.nodeSelectorTerms")
            self._terms = tuple(
                _term(term, f"{where}.nodeSelectorTerms[{index}]") for index, term in enumerate(terms)
            )
        tolerations = []
        for index, raw in enumerate(_as_list(spec.get("tolerations"), "spec.tolerations")):
            item = _as_map(raw, f"spec.tolerations[{index}]")
            tolerations.append(
                Toleration(
                    key=str(item.get("key") or ""),
                    operator=str(item.get("operator") or "Equal"),
                    value=str(item.get("value") or ""),
                    effect=str(item.get("effect") or ""),
                )
            )
        self._tolerations = tuple(tolerations)

    def _tolerated(self, taint: Taint) -> bool:
        return any(toleration.tolerates(taint) for toleration in self._tolerations)

    def rejection(self, node: NodeTraits) -> str | None:
        """Why the scheduler would not consider *node* for this pod; None when it would."""
        labels = node.labels
        for key, value in self._selector:
            if labels.get(key) != value:
                return f"nodeSelector {key}={value} does not match"
        if self._terms is not None and not any(term(labels, node.name) for term in self._terms):
            return "required node affinity does not match"
        if node.unschedulable and not self._tolerated(Taint(UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")):
            return "node is unschedulable"
        for taint in node.taints:
            if taint.effect in _BLOCKING_EFFECTS and not self._tolerated(taint):
                return f"untolerated taint {taint.key}:{taint.effect}"
        return None


def parse_taints(raw: Any) -> tuple[Taint, ...]:
    """Node `spec.taints`, tolerating junk (a node object is never ours to reject here)."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return ()
    return tuple(
        Taint(str(item.get("key") or ""), str(item.get("value") or ""), str(item.get("effect") or ""))
        for item in raw
        if isinstance(item, Mapping)
    )
