"""Property: the mutating webhook never turns a valid pod into one the apiserver rejects.

Over generated pods (containers, init containers and sidecars with any mix of missing, zero and
set cpu/memory/other quantities, with and without pod-level resources, first pass or reinvocation)
that pass the apiserver's pod resource rules (`limitguard.core.podvalidation`), every patch limitguard
produces applies cleanly as RFC 6902, still passes those rules after API defaulting, never changes
a value that was there, and a second pass adds nothing.
"""

from __future__ import annotations

import copy

import jsonpatch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import AdmissionRequest
from limitguard.core.config import BestEffortDefaults, Config
from limitguard.core.defaults import (
    DEFAULTED_ANNOTATION,
    MIRROR_ANNOTATION,
    SKIP_ANNOTATION,
    NotAPod,
    best_effort_patch,
)
from limitguard.core.podvalidation import pod_resource_errors
from limitguard.state.store import ClusterState

CPU = st.sampled_from(["0", "50m", "100m", "250m", "1", "2"])
MEMORY = st.sampled_from(["0", "64Mi", "200Mi", "512Mi", "1Gi"])
OTHER = st.sampled_from(["0", "1", "2"])


HUGEPAGES = st.sampled_from(["0", "2Mi", "4Mi"])
VALUES = {
    "cpu": CPU,
    "memory": MEMORY,
    "ephemeral-storage": MEMORY,
    "example.com/dongle": OTHER,
    "hugepages-2Mi": HUGEPAGES,
}


def resource_list(names: tuple[str, ...] = ("cpu", "memory", "ephemeral-storage", "example.com/dongle")):
    return st.fixed_dictionaries({}, optional={name: VALUES[name] for name in names})


def resources():
    return st.one_of(
        st.none(),
        st.just({}),
        st.fixed_dictionaries({}, optional={"requests": resource_list(), "limits": resource_list()}),
    )


@st.composite
def containers(draw, prefix: str, min_size: int, max_size: int, init: bool):
    count = draw(st.integers(min_size, max_size))
    made = []
    for index in range(count):
        item = {"name": f"{prefix}{index}", "image": "busybox"}
        res = draw(resources())
        if res is not None:
            item["resources"] = res
        if init and draw(st.booleans()):
            item["restartPolicy"] = "Always"
        made.append(item)
    return made


@st.composite
def pods(draw):
    spec = {"containers": draw(containers("c", 1, 3, False))}
    init = draw(containers("i", 0, 2, True))
    if init:
        spec["initContainers"] = init
    pod_level = draw(
        st.one_of(
            st.none(),
            st.just({}),
            st.fixed_dictionaries(
                {},
                optional={
                    "requests": resource_list(("cpu", "memory")),
                    "limits": resource_list(("cpu", "memory", "hugepages-2Mi")),
                },
            ),
        )
    )
    if pod_level is not None:
        spec["resources"] = pod_level
    annotations = draw(
        st.fixed_dictionaries(
            {},
            optional={
                DEFAULTED_ANNOTATION: st.just("cpu,memory"),
                MIRROR_ANNOTATION: st.just("hash"),
                SKIP_ANNOTATION: st.sampled_from(["true", "false"]),
            },
        )
    )
    metadata = {"name": "p", "namespace": "default"}
    if annotations or draw(st.booleans()):
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


@st.composite
def defaults(draw):
    limits = {
        "cpu": draw(st.sampled_from(["100m", "500m", "2"])),
        "memory": draw(st.sampled_from(["200Mi", "1Gi"])),
    }
    requests = {
        "cpu": draw(st.sampled_from(["10m", "100m"])),
        "memory": draw(st.sampled_from(["64Mi", "200Mi"])),
    }
    return BestEffortDefaults(True, limits, requests, require_namespace_label=False)


def _written_values(pod_object: dict) -> list[tuple]:
    """Every quantity the user wrote, with where it is."""
    found = []
    spec = pod_object["spec"]
    for field in ("containers", "initContainers"):
        for index, item in enumerate(spec.get(field) or []):
            for kind, amounts in (item.get("resources") or {}).items():
                found += [(field, index, kind, name, value) for name, value in (amounts or {}).items()]
    return found


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)
@given(pods(), defaults())
def test_patches_keep_valid_pods_valid(original, config):
    assume(pod_resource_errors(original["spec"]) == [])
    patch = best_effort_patch(original, config)
    patched = jsonpatch.apply_patch(copy.deepcopy(original), patch)
    assert pod_resource_errors(patched["spec"]) == []
    assert set(_written_values(original)) <= set(_written_values(patched))
    assert patched["spec"].get("resources") == original["spec"].get("resources")
    assert best_effort_patch(patched, config) == []


def test_the_checker_rejects_what_the_apiserver_rejects():
    """The checker is not vacuous: the issue's broken pod and the plain rules fail it."""
    broken = {
        "resources": {"limits": {"cpu": "250m"}},
        "containers": [{"name": "a", "resources": {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}}}],
    }
    assert any("must be less than or equal to pod limits" in e for e in pod_resource_errors(broken))
    over = {
        "containers": [{"name": "a", "resources": {"limits": {"cpu": "100m"}, "requests": {"cpu": "200m"}}}]
    }
    assert any("must be less than or equal to cpu limit" in e for e in pod_resource_errors(over))
    uncovered = {
        "resources": {"requests": {"cpu": "1"}},
        "containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi"}}}],
    }
    assert any("aggregate container requests" in e for e in pod_resource_errors(uncovered))
    defaulted = {
        "resources": {"limits": {"cpu": "1"}},
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}],
    }
    assert pod_resource_errors(defaulted) == []  # the pod-level request defaults from the containers


def _pod_create(pod: dict) -> AdmissionRequest:
    return AdmissionRequest(
        "admission.k8s.io/v1", "u", "", "pods", "", "Pod", "CREATE", "default", "p", pod, None, False
    )


def _twin(pod: dict) -> dict:
    """The pod with its first container's limits flipped between absent and empty: a different
    shape, and a different patch (a whole map added, or its entries one by one)."""
    twin = copy.deepcopy(pod)
    resources = twin["spec"]["containers"][0].setdefault("resources", {})
    if resources.get("limits") == {}:
        del resources["limits"]
    elif "limits" not in resources:
        resources["limits"] = {}
    return twin


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(pods(), min_size=1, max_size=4),
    st.lists(defaults(), min_size=1, max_size=3),
    st.randoms(use_true_random=False),
)
def test_the_remembered_answer_is_the_computed_one_and_never_shared(originals, configs, random):
    """The mutating webhook remembers its answer by the pod's shape: over pods, their twins and
    cluster defaults asked in any order and again, each answer's patch equals a fresh computation,
    and changing the operations one answer hands out never reaches another."""
    cases = [
        (pod, config) for original in originals for pod in (original, _twin(original)) for config in configs
    ]
    mutator = Mutator(ClusterState(), Config())
    for original, config in random.sample(cases, len(cases)) + random.sample(cases, len(cases)):
        mutator.config = Config(best_effort_defaults=config)
        try:
            expected = best_effort_patch(copy.deepcopy(original), config)
        except NotAPod:
            assert mutator(_pod_create(original)).reason == "malformed"
            continue
        answer = mutator(_pod_create(original))
        assert (answer.patch.operations() if answer.patch else []) == expected
        if answer.patch:
            for op in answer.patch.operations():  # a caller applying the patch may change what it inserted
                if isinstance(op["value"], dict):
                    op["value"]["changed"] = True
            assert mutator(_pod_create(original)).patch.operations() == expected
