import copy

import jsonpatch
import pytest

from limitguard.core.config import BestEffortDefaults
from limitguard.core.defaults import (
    DEFAULTED_ANNOTATION,
    NotAPod,
    best_effort_patch,
    is_best_effort,
    namespace_defaults,
    pointer,
)
from limitguard.core.podlimits import pod_limits
from limitguard.core.podrules import DEFAULT_RULES
from tests.support import container, pod

DEFAULTS = BestEffortDefaults()


def apply(pod_object, patch):
    return jsonpatch.apply_patch(copy.deepcopy(pod_object), patch)


def best_effort_pod(**fields):
    return pod("be", containers=[container("a"), container("b")], **fields)


def test_every_regular_and_init_container_gets_limits_and_explicit_requests():
    original = best_effort_pod(initContainers=[container("init")])
    patched = apply(original, best_effort_patch(original, DEFAULTS))
    for field in ("containers", "initContainers"):
        for item in patched["spec"][field]:
            assert item["resources"] == {
                "limits": {"cpu": "500m", "memory": "512Mi"},
                "requests": {"cpu": "100m", "memory": "200Mi"},
            }
    assert patched["metadata"]["annotations"][DEFAULTED_ANNOTATION] == "cpu,memory"
    # The pod stays Burstable (requests < limits), not Guaranteed, and accounting sees the limits.
    assert pod_limits(patched["spec"], None, DEFAULT_RULES) == {"cpu": 1000, "memory": 1024**3}


def test_apiserver_defaulting_after_the_patch_changes_nothing():
    """Pod defaulting copies limits into *missing* requests; with explicit requests none is missing."""
    original = best_effort_pod()
    patched = apply(original, best_effort_patch(original, DEFAULTS))
    for item in patched["spec"]["containers"]:
        requests = item["resources"]["requests"]
        defaulted = {**item["resources"]["limits"], **requests}  # what SetDefaults_ResourceRequirements does
        assert defaulted == requests


def test_a_partially_specified_pod_is_not_best_effort_and_untouched():
    partial = pod("p", containers=[container("a", requests={"memory": "10Mi"}), container("b")])
    assert not is_best_effort(partial["spec"])
    assert best_effort_patch(partial, DEFAULTS) == []


def test_an_explicit_zero_is_unset_for_qos_but_never_overwritten():
    """ComputePodQOS ignores zero quantities, so the pod is best-effort and gets defaults (it used to
    be a silent opt-out); the written "0" limit stays, and no cpu request is added above it."""
    zero = pod("z", containers=[container("a", limits={"cpu": "0"})])
    assert is_best_effort(zero["spec"])
    patched = apply(zero, best_effort_patch(zero, DEFAULTS))
    assert patched["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "0", "memory": "512Mi"},
        "requests": {"memory": "200Mi"},
    }


def test_extended_resources_alone_stay_best_effort_and_keep_their_entries():
    gpu = pod("g", containers=[container("a", limits={"nvidia.com/gpu": "1"})])
    patched = apply(gpu, best_effort_patch(gpu, DEFAULTS))
    assert patched["spec"]["containers"][0]["resources"]["limits"] == {
        "nvidia.com/gpu": "1",
        "cpu": "500m",
        "memory": "512Mi",
    }
    assert patched["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "200Mi"}


def test_idempotent_a_patched_pod_gets_no_second_patch():
    original = best_effort_pod(initContainers=[container("init")])
    patched = apply(original, best_effort_patch(original, DEFAULTS))
    assert best_effort_patch(patched, DEFAULTS) == []


def test_ephemeral_containers_are_neither_inspected_nor_patched():
    original = best_effort_pod(ephemeralContainers=[{"name": "debug", "image": "busybox"}])
    patch = best_effort_patch(original, DEFAULTS)
    assert not any("ephemeralContainers" in op["path"] for op in patch)


@pytest.mark.parametrize(
    "where", ["annotations-missing", "annotations-null", "annotations-empty", "metadata-missing"]
)
def test_annotation_map_is_created_when_absent(where):
    original = best_effort_pod()
    if where == "annotations-null":
        original["metadata"]["annotations"] = None
    elif where == "annotations-empty":
        original["metadata"]["annotations"] = {}
    elif where == "metadata-missing":
        del original["metadata"]
    patched = apply(original, best_effort_patch(original, DEFAULTS))
    assert patched["metadata"]["annotations"] == {DEFAULTED_ANNOTATION: "cpu,memory"}


def test_existing_annotations_are_kept_and_the_key_is_escaped():
    original = best_effort_pod()
    original["metadata"]["annotations"] = {"team": "a"}
    patch = best_effort_patch(original, DEFAULTS)
    assert patch[-1]["path"] == "/metadata/annotations/limitguard.io~1defaulted"
    assert apply(original, patch)["metadata"]["annotations"] == {
        "team": "a",
        DEFAULTED_ANNOTATION: "cpu,memory",
    }


def test_pointer_escapes_tilde_before_slash():
    assert pointer("metadata", "annotations", "a~b/c") == "/metadata/annotations/a~0b~1c"


@pytest.mark.parametrize(
    "annotations",
    [
        {"kubernetes.io/config.mirror": "abc"},
        {"limitguard.io/skip-defaults": "true"},
        {"limitguard.io/skip-defaults": "True"},
    ],
)
def test_mirror_pods_and_opt_outs_are_skipped(annotations):
    original = best_effort_pod()
    original["metadata"]["annotations"] = annotations
    assert best_effort_patch(original, DEFAULTS) == []


def test_namespace_override_merges_over_the_cluster_defaults():
    merged, problem = namespace_defaults(DEFAULTS, '{"limits": {"cpu": "2"}, "requests": {"memory": "64Mi"}}')
    assert problem is None
    assert dict(merged.limits) == {"cpu": "2", "memory": "512Mi"}
    assert dict(merged.requests) == {"cpu": "100m", "memory": "64Mi"}
    patched = apply(best_effort_pod(), best_effort_patch(best_effort_pod(), merged))
    assert patched["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "2"


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1]",
        '{"limits": {"cpu": "lots"}}',
        '{"limits": {"cpu": "50m"}}',
        '{"limits": {"gpu": "1"}}',
        '{"other": {}}',
    ],
)
def test_bad_namespace_overrides_fall_back_with_a_reason(text):
    merged, problem = namespace_defaults(DEFAULTS, text)
    assert merged is DEFAULTS
    assert problem


@pytest.mark.parametrize(
    "garbage",
    [
        {"spec": {"containers": "x"}},
        {"spec": {"containers": [1, 2]}},
        {"spec": {"containers": [{"name": "a", "resources": "big"}]}},
        {"spec": {"containers": [{"name": "a", "resources": {"limits": [1]}}]}},
        {"spec": None},
        {"metadata": "x", "spec": {"containers": []}},
        {"metadata": {"annotations": ["a"]}, "spec": {"containers": [{"name": "a"}]}},
        "a pod",
    ],
)
def test_garbage_raises_not_a_pod(garbage):
    with pytest.raises(NotAPod):
        best_effort_patch(garbage, DEFAULTS)


def test_a_pod_without_containers_gets_no_patch():
    assert best_effort_patch({"metadata": {}, "spec": {}}, DEFAULTS) == []
