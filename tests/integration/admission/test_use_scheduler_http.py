"""The mutating webhook sends pods of opted-in namespaces to limitguard's scheduler (real payloads, TLS)."""

import base64
import copy

import jsonpatch
import orjson
import pytest

from limitguard.cli.configfile import parse_config
from limitguard.core.config import Config, ConfigError
from limitguard.core.defaults import OPT_IN_LABEL, OPT_IN_VALUE
from limitguard.core.usescheduler import USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE
from limitguard.state.store import ClusterState
from tests.support import fixture, namespace, pod, pod_create, review

OURS = "limitguard-scheduler"
CONFIG = Config(use_scheduler_name=OURS)
USES = {USE_SCHEDULER_LABEL: USE_SCHEDULER_VALUE}
DEFAULTS = {OPT_IN_LABEL: OPT_IN_VALUE}
# Captured from real apiservers: defaulting already set schedulerName: default-scheduler.
GKE = "admissionreview-v1-pod-create-gke-no-resources.kube-rs.json"  # namespace colin-coder
MINIKUBE = "admissionreview-v1-pod-create-mutating-minikube-no-resources.admission-webhook-sample.json"
KIND = "admissionrequest-pod-create-with-resources-kind.kyverno.json"  # namespace default, has limits


def state(**labels_by_namespace: dict[str, str]) -> ClusterState:
    cluster = ClusterState()
    cluster.replace_namespaces(
        [namespace(name, labels=labels) for name, labels in labels_by_namespace.items()]
    )
    return cluster


def operations(answer: dict) -> list[dict]:
    patch = answer["response"].get("patch")
    return orjson.loads(base64.b64decode(patch)) if patch else []


def applied(body: dict, answer: dict) -> dict:
    return jsonpatch.apply_patch(copy.deepcopy(body["request"]["object"]), operations(answer))


async def test_real_pods_in_an_opted_in_namespace_get_the_scheduler(start_server):
    server = await start_server(state(default=USES), CONFIG)
    body = review(fixture(KIND))
    assert body["request"]["object"]["spec"]["schedulerName"] == "default-scheduler"
    status, answer = await server.post("/mutate", body)
    assert status == 200 and answer["response"]["allowed"]
    assert operations(answer) == [{"op": "add", "path": "/spec/schedulerName", "value": OURS}]
    result = applied(body, answer)
    assert result["spec"]["schedulerName"] == OURS
    # Reinvoked after another webhook's change: the pod already names ours, nothing more to do.
    again = copy.deepcopy(body)
    again["request"]["object"] = result
    _, second = await server.post("/mutate", again)
    assert "patch" not in second["response"]


async def test_defaults_and_the_scheduler_share_one_patch(start_server):
    server = await start_server(state(**{"colin-coder": {**USES, **DEFAULTS}, "webhook": USES}), CONFIG)
    gke = fixture(GKE)
    _, answer = await server.post("/mutate", gke)
    result = applied(gke, answer)
    assert result["spec"]["schedulerName"] == OURS
    assert all(
        c["resources"]["limits"] == {"cpu": "500m", "memory": "512Mi"} for c in result["spec"]["containers"]
    )
    # The minikube pod's namespace asked for the scheduler only: best-effort, but no defaults.
    minikube = fixture(MINIKUBE)
    _, answer = await server.post("/mutate", minikube)
    assert operations(answer) == [{"op": "add", "path": "/spec/schedulerName", "value": OURS}]


@pytest.mark.parametrize(
    ("labels", "scheduler_name", "namespace_name"),
    [
        ({}, OURS, "default"),  # the namespace did not ask
        ({USE_SCHEDULER_LABEL: "true"}, OURS, "default"),  # only the exact value, as the selector matches
        ({"limitguard.io/scheduler": "enabled"}, OURS, "default"),  # the validator's annotation key
        (USES, "", "default"),  # no scheduler configured
        (USES, OURS, "kube-system"),  # excluded namespaces are never changed
    ],
)
async def test_pods_stay_with_default_scheduler(start_server, labels, scheduler_name, namespace_name):
    server = await start_server(state(**{namespace_name: labels}), Config(use_scheduler_name=scheduler_name))
    body = review(fixture(KIND))
    body["request"]["namespace"] = namespace_name
    body["request"]["object"]["metadata"]["namespace"] = namespace_name
    _, answer = await server.post("/mutate", body)
    assert answer["response"]["allowed"] and "patch" not in answer["response"]


async def test_only_default_scheduler_is_replaced(start_server):
    server = await start_server(state(default=USES), CONFIG)
    koord = review(fixture(KIND))
    koord["request"]["object"]["spec"]["schedulerName"] = "koord-scheduler"
    bound = pod_create(pod("static", node_name="node-1", schedulerName="default-scheduler"))
    unknown_namespace = pod_create(
        pod("early", namespace="not-in-cache-yet", schedulerName="default-scheduler")
    )
    for body in (koord, bound, unknown_namespace):
        _, answer = await server.post("/mutate", body)
        assert answer["response"]["allowed"] and "patch" not in answer["response"], body["request"]["name"]
    # Without the field (no real apiserver sends that) the pod is a default-scheduler pod.
    unnamed = pod_create(pod("unnamed"))
    _, answer = await server.post("/mutate", unnamed)
    assert applied(unnamed, answer)["spec"]["schedulerName"] == OURS


SWAP_ROUTES = ("/mutate", "/mutate-scheduler")


def _agent_pods() -> dict[str, dict]:
    """Pods limitguard's scheduler must never take, as the apiserver sends them (schedulerName set)."""
    daemonset = pod("agent-x7k2p", owner_kind="DaemonSet", schedulerName="default-scheduler")
    mirror = pod("etcd-node-1", schedulerName="default-scheduler")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "0f7f5c3b"}
    bound = pod("pinned", node_name="node-1", schedulerName="default-scheduler")
    return {"daemonset": daemonset, "mirror": mirror, "nodeName": bound}


@pytest.mark.parametrize("route", SWAP_ROUTES)
@pytest.mark.parametrize("kind", ["daemonset", "mirror", "nodeName"])
async def test_node_agents_and_bound_pods_keep_default_scheduler(start_server, route, kind):
    """With limitguard down its scheduler's pods wait (ignorable: false): node agents never go there."""
    server = await start_server(state(default=USES), CONFIG)
    _, answer = await server.post(route, pod_create(_agent_pods()[kind]))
    assert answer["response"]["allowed"] and "patch" not in answer["response"]


@pytest.mark.parametrize("route", SWAP_ROUTES)
async def test_other_owners_are_swapped(start_server, route):
    """Only a DaemonSet *controller* marks a node agent (as kubectl drain decides): a ReplicaSet's pod,
    or one a DaemonSet merely co-owns, goes to limitguard's scheduler."""
    server = await start_server(state(default=USES), CONFIG)
    for owned in (
        pod("web-1", owner_kind="ReplicaSet", schedulerName="default-scheduler"),
        pod("co-owned", owner_kind="DaemonSet", owner_controller=False, schedulerName="default-scheduler"),
    ):
        _, answer = await server.post(route, pod_create(owned))
        assert operations(answer) == [{"op": "add", "path": "/spec/schedulerName", "value": OURS}]


async def test_configured_daemonset_kinds_are_node_agents_too(start_server):
    kruise = pod("agent", owner_kind="DaemonSet", schedulerName="default-scheduler")
    kruise["metadata"]["ownerReferences"][0]["apiVersion"] = "apps.kruise.io/v1alpha1"
    head = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    config = parse_config(
        {
            **head,
            "useScheduler": {"schedulerName": OURS},
            "limitAware": {"daemonSetOwnerKinds": [{"group": "apps.kruise.io", "kind": "DaemonSet"}]},
        }
    )
    server = await start_server(state(default=USES), config)
    _, answer = await server.post("/mutate-scheduler", pod_create(kruise))
    assert "patch" not in answer["response"]


async def test_a_namespace_not_yet_cached_trusts_the_webhook_selector(start_server):
    """The use-scheduler entry only calls /mutate-scheduler for namespaces its namespaceSelector
    matched, so a namespace created with the label a moment ago (not in the cache yet) is honoured
    there; /mutate, which any namespace reaches, still reads the label and changes nothing."""
    server = await start_server(state(default=USES), CONFIG)
    early = pod_create(pod("early", namespace="created-just-now", schedulerName="default-scheduler"))
    _, answer = await server.post("/mutate-scheduler", early)
    assert operations(answer) == [{"op": "add", "path": "/spec/schedulerName", "value": OURS}]
    _, answer = await server.post("/mutate", early)
    assert "patch" not in answer["response"]
    # Excluded namespaces stay excluded even where the selector is trusted.
    system = pod_create(pod("early", namespace="kube-system", schedulerName="default-scheduler"))
    _, answer = await server.post("/mutate-scheduler", system)
    assert "patch" not in answer["response"]


def test_the_configuration_names_the_scheduler() -> None:
    head = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    assert parse_config({**head, "useScheduler": {"schedulerName": OURS}}).use_scheduler_name == OURS
    assert parse_config(head).use_scheduler_name == ""
    with pytest.raises(ConfigError, match=r"useScheduler\.schedulerName"):
        parse_config({**head, "useScheduler": {"schedulerName": "Not_A_Name"}})
