"""Which nodes could the scheduler place an unbound pod on? (SPEC 3)

Mirrors the scheduler's required filters that depend only on the pod and the node object:
nodeSelector, required node affinity (matchExpressions on labels, matchFields on metadata.name),
taints with effect NoSchedule/NoExecute against tolerations, and `spec.unschedulable`.
A placement is compiled once per request, then tested against thousands of nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from limitguard.core.objects import is_object
from limitguard.core.podlimits import PodSpecError

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


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


UNSCHEDULABLE_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")


def _as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PodSpecError(f"{where} is not a list")
    return value


def _as_map(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not is_object(value):  # a dict without the Mapping ABC check
        raise PodSpecError(f"{where} is not an object")
    return value


def _text(value: Any, where: str) -> str:
    """A string field as text: a number or boolean as its text, as before, but a list or object
    is refused (the apiserver would refuse it too, and the text of a deeply nested one exhausts
    the interpreter's recursion)."""
    if type(value) is str:
        return value
    if isinstance(value, (list, dict)):
        raise PodSpecError(f"{where} is not a string")
    return str(value)


def _integer(text: Any) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One NodeSelectorRequirement, compiled: kept as data so a columnar scan can evaluate it too."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: frozenset[str]
    on_field: bool  # matchFields (only metadata.name is ever set) rather than matchExpressions
    bound: int = 0  # the integer of Gt/Lt

    def value(self, labels: Mapping[str, str], node_name: str) -> str | None:
        if self.on_field:
            return node_name if self.key == "metadata.name" else None
        return labels.get(self.key)

    def matches_value(self, value: str | None) -> bool:
        """Does a node whose key has *value* (None: absent) satisfy the requirement?"""
        operator = self.operator
        if operator == "In":
            return value in self.values
        if operator == "NotIn":
            return value not in self.values
        if operator == "Exists":
            return value is not None
        if operator == "DoesNotExist":
            return value is None
        number = _integer(value)
        return number is not None and (number > self.bound if operator == "Gt" else number < self.bound)

    def __call__(self, labels: Mapping[str, str], node_name: str) -> bool:
        return self.matches_value(self.value(labels, node_name))


_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def _requirement(raw: Any, where: str, field_lookup: bool) -> Requirement:
    """Compile one NodeSelectorRequirement into a test over (labels, node name)."""
    requirement = _as_map(raw, where)
    key = requirement.get("key")
    operator = requirement.get("operator")
    values = [
        value if type(value) is str else _text(value, f"{where}.values")
        for value in _as_list(requirement.get("values"), f"{where}.values")
    ]
    if not isinstance(key, str):
        raise PodSpecError(f"{where}.key is not a string")
    if operator in ("Gt", "Lt"):
        bound = _integer(values[0]) if len(values) == 1 else None
        if bound is None:
            raise PodSpecError(f"{where}: {operator} needs exactly one integer value")
        return Requirement(key, operator, frozenset(values), field_lookup, bound)
    if not isinstance(operator, str) or operator not in _OPERATORS:
        raise PodSpecError(f"{where}.operator: unsupported value {operator!r}")
    return Requirement(key, operator, frozenset(values), field_lookup)


def _term(raw: Any, where: str) -> tuple[Requirement, ...]:
    """A NodeSelectorTerm: all of its requirements must hold; an empty term selects no node."""
    term = _as_map(raw, where)
    return tuple(
        _requirement(item, f"{where}.matchExpressions[{index}]", field_lookup=False)
        for index, item in enumerate(_as_list(term.get("matchExpressions"), f"{where}.matchExpressions"))
    ) + tuple(
        _requirement(item, f"{where}.matchFields[{index}]", field_lookup=True)
        for index, item in enumerate(_as_list(term.get("matchFields"), f"{where}.matchFields"))
    )


def term_matches(term: tuple[Requirement, ...], labels: Mapping[str, str], node_name: str) -> bool:
    # an empty term selects no node, as in the scheduler
    return bool(term) and all(requirement(labels, node_name) for requirement in term)


class Toleration(NamedTuple):
    """A tuple, not a frozen dataclass (whose keyword __init__ cost ~2.5 us): every pod create
    builds one per toleration, and the apiserver gives every pod two (not-ready, unreachable).
    Hashable: a placement's tolerations are part of its memo key."""

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
        self.selector = tuple(
            (str(key), value if type(value) is str else _text(value, f"spec.nodeSelector.{key}"))
            for key, value in selector.items()
        )
        affinity = _as_map(spec.get("affinity"), "spec.affinity")
        node_affinity = _as_map(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        # None: no required node affinity; else any term must match
        self.terms: tuple[tuple[Requirement, ...], ...] | None = None
        if required is not None:
            where = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            terms = _as_list(_as_map(required, where).get("nodeSelectorTerms"), f"{where}.nodeSelectorTerms")
            self.terms = tuple(
                _term(term, f"{where}.nodeSelectorTerms[{index}]") for index, term in enumerate(terms)
            )
        tolerations = []
        for index, raw in enumerate(_as_list(spec.get("tolerations"), "spec.tolerations")):
            # the where-text only for the error: two tolerations on every pod, each formatted for nothing
            item = raw if type(raw) is dict else _as_map(raw, f"spec.tolerations[{index}]")
            get = item.get
            key, operator = get("key") or "", get("operator") or "Equal"
            value, effect = get("value") or "", get("effect") or ""
            if type(key) is str and type(operator) is str and type(value) is str and type(effect) is str:
                tolerations.append(Toleration(key, operator, value, effect))
            else:
                where = f"spec.tolerations[{index}]"
                texts = (_text(key, where), _text(operator, where), _text(value, where), _text(effect, where))
                tolerations.append(Toleration(*texts))
        self._tolerations = tuple(tolerations)
        # Equal keys, equal constraints: pods of one workload share their eligible nodes.
        self.key = (self.selector, self.terms, self._tolerations)

    def tolerated(self, taint: Taint) -> bool:
        return any(toleration.tolerates(taint) for toleration in self._tolerations)

    def tolerates_all(self, taints: Sequence[Taint]) -> bool:
        """Does the pod tolerate every NoSchedule/NoExecute taint of *taints*?"""
        return all(taint.effect not in BLOCKING_EFFECTS or self.tolerated(taint) for taint in taints)

    def rejection(self, node: NodeTraits) -> str | None:
        """Why the scheduler would not consider *node* for this pod; None when it would."""
        labels = node.labels
        for key, value in self.selector:
            if labels.get(key) != value:
                return f"nodeSelector {key}={value} does not match"
        if self.terms is not None and not any(term_matches(term, labels, node.name) for term in self.terms):
            return "required node affinity does not match"
        if node.unschedulable and not self.tolerated(UNSCHEDULABLE_TAINT):
            return "node is unschedulable"
        for taint in node.taints:
            if taint.effect in BLOCKING_EFFECTS and not self.tolerated(taint):
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
