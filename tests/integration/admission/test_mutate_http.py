"""The mutating webhook over TLS with real pod-create payloads."""

import base64
import copy

import jsonpatch
import orjson

from limitguard.core.config import BestEffortDefaults, Config
from limitguard.core.defaults import DEFAULTED_ANNOTATION, OPT_IN_LABEL, OPT_IN_VALUE, SKIP_ANNOTATION
from limitguard.core.podlimits import pod_limits
from limitguard.core.podrules import DEFAULT_RULES
from limitguard.state.store import ClusterState
from tests.support import fixture, namespace, pod, pod_create, review

REAL_BEST_EFFORT = (
    "admissionreview-v1-pod-create-gke-no-resources.kube-rs.json",
    "admissionreview-v1-pod-create-mutating-minikube-no-resources.admission-webhook-sample.json",
)


OPTED_IN = {OPT_IN_LABEL: OPT_IN_VALUE}
# The namespaces of the REAL_BEST_EFFORT payloads and of the builders' pods, opted in.
FIXTURE_NAMESPACES = ("colin-coder", "webhook", "default")


def state_with_namespaces(*namespaces: dict) -> ClusterState:
    state = ClusterState()
    state.replace_namespaces([*(opted_in(name) for name in FIXTURE_NAMESPACES), *namespaces])
    return state


def opted_in(name: str, **annotations: str) -> dict:
    return namespace(name, labels=OPTED_IN, annotations=annotations)


def patched(body: dict, answer: dict) -> dict:
    ops = orjson.loads(base64.b64decode(answer["response"]["patch"]))
    return jsonpatch.apply_patch(copy.deepcopy(body["request"]["object"]), ops)


async def test_real_best_effort_pods_get_defaults(start_server):
    server = await start_server(state_with_namespaces())
    for name in REAL_BEST_EFFORT:
        body = fixture(name)
        status, answer = await server.post("/mutate", body)
        assert status == 200, name
        response = answer["response"]
        assert response["uid"] == body["request"]["uid"]
        assert response["allowed"] and response["patchType"] == "JSONPatch"
        result = patched(body, answer)
        for item in result["spec"]["containers"]:
            assert item["resources"]["limits"] == {"cpu": "500m", "memory": "512Mi"}
            assert item["resources"]["requests"] == {"cpu": "100m", "memory": "200Mi"}
        assert result["metadata"]["annotations"][DEFAULTED_ANNOTATION] == "cpu,memory"
        # Re-sent after mutation (reinvocationPolicy IfNeeded): no second patch.
        again = copy.deepcopy(body)
        again["request"]["object"] = result
        _, second = await server.post("/mutate", again)
        assert "patch" not in second["response"]


async def test_pod_with_resources_is_not_patched(start_server):
    server = await start_server(state_with_namespaces())
    body = review(fixture("admissionrequest-pod-create-with-resources-kind.kyverno.json"))
    _, answer = await server.post("/mutate", body)
    assert answer["response"]["allowed"] and "patch" not in answer["response"]


async def test_v1beta1_pod_with_extended_resources_only_memory_cpu_count(start_server):
    server = await start_server(state_with_namespaces())
    body = fixture("admissionreview-v1beta1-pod-create-extended-resources-cpupool.nokia-cpu-pooler.json")
    _, answer = await server.post("/mutate", body)
    assert answer["apiVersion"] == "admission.k8s.io/v1beta1"
    assert "patch" not in answer["response"]  # it sets memory: not best-effort


async def test_namespace_override_and_opt_out_come_from_the_state(start_server):
    state = state_with_namespaces(
        opted_in("big", **{"limitguard.io/default-limits": '{"limits": {"cpu": "2", "memory": "4Gi"}}'}),
        opted_in("quiet", **{"limitguard.io/skip-defaults": "true"}),
        opted_in("broken", **{"limitguard.io/default-limits": "{nope"}),
    )
    server = await start_server(state)
    big = pod_create(pod("a", namespace="big", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", big)
    assert pod_limits(patched(big, answer)["spec"], None, DEFAULT_RULES) == {
        "cpu": 2000,
        "memory": 4 * 1024**3,
    }
    quiet = pod_create(pod("b", namespace="quiet", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", quiet)
    assert "patch" not in answer["response"]
    broken = pod_create(pod("c", namespace="broken", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", broken)
    assert pod_limits(patched(broken, answer)["spec"], None, DEFAULT_RULES) == {
        "cpu": 500,
        "memory": 512 * 1024**2,
    }
    assert any("broken" in warning for warning in answer["response"]["warnings"])


async def test_excluded_namespaces_and_other_operations_are_left_alone(start_server):
    server = await start_server(state_with_namespaces())
    system = pod_create(pod("s", namespace="kube-system", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", system)
    assert "patch" not in answer["response"]
    update = review(fixture("admissionrequest-pod-update-labels-kind.kyverno.json"))
    _, answer = await server.post("/mutate", update)
    assert answer["response"]["allowed"] and "patch" not in answer["response"]


async def test_garbage_objects_are_allowed_without_a_patch(start_server):
    server = await start_server(state_with_namespaces())
    for garbage in (
        {"spec": {"containers": [1, "two"]}},
        "a string",
        None,
        {"spec": {"containers": {"a": 1}}},
        {"metadata": {"annotations": 5}, "spec": {"containers": []}},
    ):
        body = pod_create(pod("g"))
        body["request"]["object"] = garbage
        status, answer = await server.post("/mutate", body)
        assert status == 200 and answer["response"]["allowed"] and "patch" not in answer["response"]


async def test_the_validating_webhook_then_sees_the_injected_limits(start_server):
    """The apiserver runs validation after mutation: the defaulted pod is accounted with its new limits."""
    from limitguard.testing.examples import config, worked_example

    server = await start_server(worked_example(), config())
    body = pod_create(pod("be", node_name="node1", containers=[{"name": "c", "image": "x"}]))
    _, mutation = await server.post("/mutate", body)
    body["request"]["object"] = patched(body, mutation)
    _, validation = await server.post("/validate", body)
    assert validation["response"]["allowed"] is False  # node1 is full; 500m no longer fits
    assert "cpu limit 500m exceeds remaining 0" in validation["response"]["status"]["message"]


async def test_by_default_only_namespaces_labelled_for_defaults_are_mutated(start_server):
    """A default configuration changes nothing unasked: a namespace without the label
    `limitguard.io/defaults: enabled`, one with another value, and one not in the cache yet all get
    no patch; the labelled one does, and there the opt-out annotation on the pod still wins."""
    state = ClusterState()
    state.replace_namespaces(
        [
            namespace("plain"),
            namespace("other-value", labels={OPT_IN_LABEL: "true"}),
            namespace("asked", labels=OPTED_IN),
        ]
    )
    server = await start_server(state)
    bare = [{"name": "c", "image": "x"}]
    for name in ("plain", "other-value", "never-seen"):
        _, answer = await server.post("/mutate", pod_create(pod("p", namespace=name, containers=bare)))
        assert answer["response"]["allowed"] and "patch" not in answer["response"], name
    asked = pod_create(pod("p", namespace="asked", containers=bare))
    _, answer = await server.post("/mutate", asked)
    assert pod_limits(patched(asked, answer)["spec"], None, DEFAULT_RULES) == {
        "cpu": 500,
        "memory": 512 * 1024**2,
    }
    declined = pod("d", namespace="asked", containers=bare)
    declined["metadata"]["annotations"] = {SKIP_ANNOTATION: "true"}
    _, answer = await server.post("/mutate", pod_create(declined))
    assert answer["response"]["allowed"] and "patch" not in answer["response"]


async def test_without_the_label_requirement_every_namespace_not_excluded_is_mutated(start_server):
    state = ClusterState()
    state.replace_namespaces([namespace("plain")])
    everywhere = Config(best_effort_defaults=BestEffortDefaults(require_namespace_label=False))
    server = await start_server(state, everywhere)
    bare = [{"name": "c", "image": "x"}]
    for name in ("plain", "never-seen"):
        body = pod_create(pod("p", namespace=name, containers=bare))
        _, answer = await server.post("/mutate", body)
        assert pod_limits(patched(body, answer)["spec"], None, DEFAULT_RULES) == {
            "cpu": 500,
            "memory": 512 * 1024**2,
        }, name
    _, answer = await server.post("/mutate", pod_create(pod("s", namespace="kube-system", containers=bare)))
    assert "patch" not in answer["response"]
