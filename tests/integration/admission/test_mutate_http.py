"""The mutating webhook over TLS with real pod-create payloads."""

import base64
import copy

import jsonpatch
import orjson
from limitguard.core.defaults import DEFAULTED_ANNOTATION
from limitguard.core.podlimits import pod_limits
from limitguard.state.store import ClusterState

from tests.support import fixture, pod, pod_create, review

REAL_BEST_EFFORT = (
    "admissionreview-v1-pod-create-gke-no-resources.kube-rs.json",
    "admissionreview-v1-pod-create-mutating-minikube-no-resources.admission-webhook-sample.json",
)


def state_with_namespaces(*namespaces: dict) -> ClusterState:
    state = ClusterState()
    state.replace_namespaces(list(namespaces))
    return state


def namespace(name: str, **annotations: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations}}


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
        namespace("big", **{"limitguard.io/default-limits": '{"limits": {"cpu": "2", "memory": "4Gi"}}'}),
        namespace("quiet", **{"limitguard.io/skip-defaults": "true"}),
        namespace("broken", **{"limitguard.io/default-limits": "{nope"}),
    )
    server = await start_server(state)
    big = pod_create(pod("a", namespace="big", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", big)
    assert pod_limits(patched(big, answer)["spec"]) == {"cpu": 2000, "memory": 4 * 1024**3}
    quiet = pod_create(pod("b", namespace="quiet", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", quiet)
    assert "patch" not in answer["response"]
    broken = pod_create(pod("c", namespace="broken", containers=[{"name": "c", "image": "x"}]))
    _, answer = await server.post("/mutate", broken)
    assert pod_limits(patched(broken, answer)["spec"]) == {"cpu": 500, "memory": 512 * 1024**2}
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
