"""Hypothesis strategies and settings for hostile JSON, shared by the fuzz tests."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from limitguard.core.hints import HINT_ANNOTATION, PREFERRED


def fuzz_settings(examples: int) -> settings:
    """*examples* per run, no deadline (verdicts never depend on machine speed), no example database."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=50),
    st.sampled_from(["", "1e999", "NaN", "-1", "1.5.5", "100Ki", "\u0000", "9" * 300, "1Gi", "🙂", "Always"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)

# Where a hostile pod differs from a well-formed one the placement hint reads or patches.
HINT_PATHS: tuple[tuple[str, ...], ...] = (
    ("spec", "affinity"),
    ("spec", "affinity", "nodeAffinity"),
    ("spec", "affinity", "nodeAffinity", PREFERRED),
    ("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
    (
        "spec",
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    ),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "schedulerName"),
    ("spec", "nodeName"),
    ("spec", "containers"),
    ("spec", "resources"),
    ("status",),
    ("metadata", "annotations"),
    ("metadata", "annotations", HINT_ANNOTATION),
    ("metadata", "ownerReferences"),
    ("metadata",),
    ("spec",),
)


def nested(levels: int, bottom: Any = "x") -> Any:
    """*bottom* inside *levels* lists (built without recursion)."""
    for _ in range(levels):
        bottom = [bottom]
    return bottom


def many_expressions(count: int) -> dict[str, Any]:
    """A required node affinity with *count* expressions in one term."""
    expressions = [{"key": f"k{i}", "operator": "In", "values": [f"v{i}"]} for i in range(count)]
    return {"nodeSelectorTerms": [{"matchExpressions": expressions}]}


# Values no random draw is likely to reach: nesting (orjson encodes up to 255 levels; deeper ones
# are spliced in as text, see deep_pod_create), a huge selector, text where our annotation holds JSON.
SPECIAL_VALUES: tuple[Any, ...] = (
    nested(200),
    {"a": nested(200)},
    [{"weight": 1, "preference": {"matchExpressions": nested(200)}}],
    [{"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": [1, [2]]}]}}],
    many_expressions(5000),
    {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": nested(200)}]}]},
    [{"key": nested(200)}, {"key": 1, "operator": True, "value": 2.5, "effect": None}],
    "[" * 100_000,
    '{"term": ' * 2000,
    {HINT_ANNOTATION: 3, "x": ["not", "a", "string"]},
)
special_values = st.sampled_from(SPECIAL_VALUES)


def create_review(pod_object: Any, namespace: str, uid: str = "fuzz") -> bytes:
    """A pod CREATE AdmissionReview as JSON, whatever *pod_object* is (no copy of it is made)."""
    request = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": namespace,
        "name": "fuzzed",
        "operation": "CREATE",
        "object": pod_object,
    }
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


# Where deep_pod_create splices a deep value into a pod's spec.
DEEP_PLACES = {
    "preferred": (
        '"spec":{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":'
        '[{"weight":1,"preference":{"a":DEEP}}]}},'
    ),
    "required-values": (
        '"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":'
        '{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"In","values":DEEP}]}]}}},'
    ),
    "toleration-key": '"spec":{"tolerations":[{"key":DEEP}],',
    "node-selector": '"spec":{"nodeSelector":{"a":DEEP},',
}


def deep_pod_create(pod_object: dict[str, Any], place: str, levels: int) -> bytes:
    """The pod CREATE of *pod_object* (which has a spec) with a value *levels* lists deep at one of
    DEEP_PLACES, spliced in as text: orjson decodes 1,024 levels but encodes only 255."""
    deep = "[" * levels + '"x"' + "]" * levels
    text = create_review(pod_object, pod_object["metadata"]["namespace"]).decode()
    return text.replace('"spec":{', DEEP_PLACES[place].replace("DEEP", deep), 1).encode()


def replaced_at(document: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of *document* with *value* at *path*: every object along the path is copied (never
    changing a shared value), anything else along it replaced by an object."""
    top = parent = dict(document)
    for step in path[:-1]:
        child = parent.get(step)
        parent[step] = child = dict(child) if isinstance(child, dict) else {}
        parent = child
    parent[path[-1]] = value
    return top


@st.composite
def hostile_pods(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """*base* (a pod that gets a hint; not changed) with one to three of its HINT_PATHS replaced by
    arbitrary JSON or one of the special values."""
    document = base
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(HINT_PATHS))
        value = draw(st.one_of(json_values, json_values, special_values))
        document = replaced_at(document, path, value)
    try:  # integers past 64 bits: orjson encodes (and the server decodes) none, so no review
        orjson.dumps(document)
    except orjson.JSONEncodeError:
        assume(False)
    return document
