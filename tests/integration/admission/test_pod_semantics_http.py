"""Kubernetes 1.33-1.35 pod semantics (issue 13), each behaviour through the real app over TLS.

Numbers follow the issue: (1) pod-level resources, (2) mutation never breaks a valid pod,
(3) mirror pods, (4) resize growth in the ledger, (5) resize status, (6) DaemonSet controller
references, (7) reinvocation, (8) PodState nominated pods.
"""

from __future__ import annotations

import base64
import copy

import jsonpatch
import orjson

from limitguard.core.config import Config, LimitAwareConfig
from limitguard.core.configread import config_from_mapping
from limitguard.core.defaults import DEFAULTED_ANNOTATION
from limitguard.core.podvalidation import pod_resource_errors
from limitguard.testing.examples import config, worked_example
from tests.support import binding, container, pod, pod_create, resize

MIRROR = {"kubernetes.io/config.mirror": "6d5f1c1b0b1e4d0c"}


def with_pod_level(pod_object: dict, **resources: dict) -> dict:
    pod_object["spec"]["resources"] = resources
    return pod_object


def bare(name: str, **fields) -> dict:
    """A pod whose containers name no resources."""
    return pod(name, containers=[container("app")], **fields)


def patch_of(answer: dict) -> list:
    encoded = answer["response"].get("patch")
    return orjson.loads(base64.b64decode(encoded)) if encoded else []


def applied(pod_object: dict, answer: dict) -> dict:
    return jsonpatch.apply_patch(copy.deepcopy(pod_object), patch_of(answer))


async def verdict(server, body: dict) -> dict:
    status, answer = await server.post("/validate", body)
    assert status == 200
    return answer["response"]


# -- (1) pod-level resources ----------------------------------------------------------------------
async def test_1_a_pod_level_limit_alone_is_counted_on_create_binding_and_in_sums(start_server):
    state = worked_example()
    server = await start_server(state, config())
    on_full_node = with_pod_level(bare("plr", node_name="node1"), limits={"cpu": "4"})
    response = await verdict(server, pod_create(on_full_node))
    assert not response["allowed"] and "cpu limit 4 exceeds remaining 0" in response["status"]["message"]

    state.upsert_pod(with_pod_level(bare("pending-plr", phase="Pending"), limits={"cpu": "4"}))
    response = await verdict(server, binding("pending-plr", "node1"))
    assert not response["allowed"]

    state.upsert_pod(with_pod_level(bare("bound-plr", node_name="node2"), limits={"cpu": "4"}))
    assert state.committed("node2")["cpu"] == 9000  # 3 + 2 + the pod-level 4
    response = await verdict(server, binding("pod5", "node2"))  # 9 + 4 > 10
    assert not response["allowed"] and "allocated 9 of capacity 10" in response["status"]["message"]


async def test_1_a_pod_level_limit_replaces_the_sum_of_container_limits(start_server):
    server = await start_server(worked_example(), config())
    two = pod(
        "two",
        node_name="node2",  # 5 of 10 allocated: room for 5, not for the containers' 5 + 5
        containers=[container("a", limits={"cpu": "5"}), container("b", limits={"cpu": "5"})],
    )
    response = await verdict(server, pod_create(with_pod_level(two, limits={"cpu": "5"})))
    assert response["allowed"]


# -- (2) mutation ---------------------------------------------------------------------------------
async def test_2_a_pod_with_pod_level_limits_is_not_best_effort_and_gets_no_container_defaults(start_server):
    server = await start_server(worked_example())
    plr = with_pod_level(bare("plr"), limits={"cpu": "250m"})
    assert pod_resource_errors(plr["spec"]) == []
    status, answer = await server.post("/mutate", pod_create(plr))
    assert status == 200 and answer["response"]["allowed"]
    assert patch_of(answer) == []


async def test_2_zero_requests_are_unset_for_qos_and_the_patched_pod_stays_valid(start_server):
    server = await start_server(worked_example())
    zero = pod("zero", containers=[container("app", requests={"cpu": "0", "memory": "0"})])
    status, answer = await server.post("/mutate", pod_create(zero))
    assert status == 200
    result = applied(zero, answer)
    assert result["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "0", "memory": "0"},  # the user's values stay
        "limits": {"cpu": "500m", "memory": "512Mi"},
    }
    assert pod_resource_errors(result["spec"]) == []


# -- (3) mirror pods ------------------------------------------------------------------------------
async def test_3_a_mirror_pod_on_a_full_node_is_allowed_and_counted(start_server):
    state = worked_example()
    server = await start_server(state, config())
    static = pod("etcd-node1", node_name="node1", cpu="2")
    static["metadata"]["annotations"] = dict(MIRROR)
    response = await verdict(server, pod_create(static))
    assert response["allowed"]
    assert state.allocated("node1")["cpu"] == 12000  # held like a binding: 10 + 2
    state.upsert_pod(static)
    assert state.committed("node1")["cpu"] == 12000 and state.allocated("node1")["cpu"] == 12000


# -- (4) approved resize growth is held in the ledger ---------------------------------------------
async def test_4_two_resizes_within_the_watch_lag_cannot_both_pass_on_the_old_sum(start_server):
    state = worked_example()  # node2: pod3 3 + pod4 2 = 5 of 10
    server = await start_server(state, config())
    pod3, pod4 = pod("pod3", node_name="node2", cpu="3"), pod("pod4", node_name="node2", cpu="2")
    pod3_grown = pod("pod3", node_name="node2", cpu="7")
    assert (await verdict(server, resize(pod3, pod3_grown)))["allowed"]  # 5 - 3 + 7 = 9
    assert state.allocated("node2")["cpu"] == 9000
    denied = await verdict(server, resize(pod4, pod("pod4", node_name="node2", cpu="4")))
    assert not denied["allowed"]  # 9 - 2 + 4 = 11; on the stale sum it would be 7
    assert not (await verdict(server, binding("pod5", "node2")))["allowed"]
    # The watch catches up: the cache counts 7 for pod3 and the hold is released, not doubled.
    state.upsert_pod(pod3_grown)
    assert state.ledger.held_by("default/pod3") == {}
    assert state.allocated("node2")["cpu"] == 9000


async def test_4_a_stale_event_does_not_release_the_resize_hold(start_server):
    state = worked_example()
    server = await start_server(state, config())
    pod3 = pod("pod3", node_name="node2", cpu="3")
    assert (await verdict(server, resize(pod3, pod("pod3", node_name="node2", cpu="7"))))["allowed"]
    relabelled = copy.deepcopy(pod3)
    relabelled["metadata"]["labels"] = {"touched": "yes"}
    state.upsert_pod(relabelled)  # an older version of the pod: still 3
    assert state.allocated("node2")["cpu"] == 9000


async def test_4_dry_run_resizes_hold_nothing(start_server):
    state = worked_example()
    server = await start_server(state, config())
    body = resize(pod("pod3", node_name="node2", cpu="3"), pod("pod3", node_name="node2", cpu="7"))
    body["request"]["dryRun"] = True
    assert (await verdict(server, body))["allowed"]
    assert state.allocated("node2")["cpu"] == 5000


# -- (5) resize status ----------------------------------------------------------------------------
def resized(name: str, spec_cpu: str, running_cpu: str, *, infeasible: bool = False) -> dict:
    p = pod(name, node_name="node2", containers=[container("app", limits={"cpu": spec_cpu})])
    p["status"]["containerStatuses"] = [{"name": "app", "resources": {"limits": {"cpu": running_cpu}}}]
    if infeasible:
        p["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return p


async def test_5_a_pending_downsize_counts_the_running_value(start_server):
    state = worked_example()
    state.upsert_pod(resized("pod3", spec_cpu="1", running_cpu="3"))  # still running at 3
    server = await start_server(state, config())
    state.upsert_pod(pod("big", cpu="6", phase="Pending"))
    response = await verdict(server, binding("big", "node2"))  # 3 + 2 + 6 > 10; spec alone: 1 + 2 + 6
    assert not response["allowed"] and "allocated 5 of capacity 10" in response["status"]["message"]


async def test_5_an_infeasible_upsize_counts_only_the_running_value(start_server):
    state = worked_example()
    state.upsert_pod(resized("pod3", spec_cpu="8", running_cpu="3", infeasible=True))
    server = await start_server(state, config())
    assert (await verdict(server, binding("pod5", "node2")))["allowed"]  # 3 + 2 + 4; spec: 8 + 2 + 4


async def test_5_the_resize_check_uses_effective_values_on_both_sides(start_server):
    state = worked_example()
    server = await start_server(state, config())
    running = resized("pod3", spec_cpu="3", running_cpu="3")
    # Lowering the spec below what still runs changes no effective value: nothing to check.
    lowered = await verdict(server, resize(running, resized("pod3", spec_cpu="1", running_cpu="3")))
    assert lowered["allowed"]
    # A stale Infeasible verdict of an earlier attempt does not hide the new desired limit.
    stale = resized("pod3", spec_cpu="9", running_cpu="3", infeasible=True)
    denied = await verdict(server, resize(running, stale))  # 5 - 3 + 9 = 11 > 10
    assert not denied["allowed"] and "cpu limit 9" in denied["status"]["message"]


# -- (6) DaemonSet controller references ----------------------------------------------------------
def owned(name: str, api_version: str, kind: str, controller: bool) -> dict:
    p = pod(name, node_name="node1", cpu="1")
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": "o", "uid": "o", "controller": controller}
    ]
    return p


async def test_6_only_a_controller_reference_to_a_daemonset_exempts(start_server):
    server = await start_server(worked_example(), config())
    assert (await verdict(server, pod_create(owned("ds", "apps/v1", "DaemonSet", True))))["allowed"]
    assert not (await verdict(server, pod_create(owned("not-ctl", "apps/v1", "DaemonSet", False))))["allowed"]
    kruise = owned("kruise", "apps.kruise.io/v1alpha1", "DaemonSet", True)
    assert not (await verdict(server, pod_create(kruise)))["allowed"]


async def test_6_daemonset_like_kinds_are_configurable(start_server):
    raw = {
        "limitAware": {
            "defaultLimitToAllocatableRatio": {"cpu": 125},
            "daemonSetOwnerKinds": [{"group": "apps.kruise.io", "kind": "DaemonSet"}],
        }
    }
    configured = config_from_mapping(raw)
    assert ("apps", "DaemonSet") in configured.limit_aware.daemonset_kinds
    server = await start_server(worked_example(), configured)
    kruise = owned("kruise", "apps.kruise.io/v1alpha1", "DaemonSet", True)
    assert (await verdict(server, pod_create(kruise)))["allowed"]


# -- (7) reinvocation -----------------------------------------------------------------------------
async def test_7_a_container_added_after_defaulting_gets_defaults_on_reinvocation(start_server):
    server = await start_server(worked_example())
    first = bare("re")
    status, answer = await server.post("/mutate", pod_create(first))
    defaulted = applied(first, answer)
    assert DEFAULTED_ANNOTATION in defaulted["metadata"]["annotations"]
    later = copy.deepcopy(defaulted)
    later["spec"]["containers"].append(container("injected-proxy"))  # a later mutating webhook
    status, answer = await server.post("/mutate", pod_create(later))
    assert status == 200
    paths = [op["path"] for op in patch_of(answer)]
    assert paths == ["/spec/containers/1/resources"]
    result = applied(later, answer)
    assert result["spec"]["containers"][1]["resources"]["limits"] == {"cpu": "500m", "memory": "512Mi"}
    assert result["spec"]["containers"][0] == defaulted["spec"]["containers"][0]
    assert pod_resource_errors(result["spec"]) == []
    # Once more changes nothing.
    status, answer = await server.post("/mutate", pod_create(result))
    assert patch_of(answer) == []


# -- (8) PodState counts only pods still waiting --------------------------------------------------
def test_8_bound_pods_with_a_stale_nominated_node_are_not_nominated():
    state = worked_example()
    stale = pod("bound", node_name="node1", cpu="1")
    stale["status"]["nominatedNodeName"] = "node2"
    waiting = pod("waiting", cpu="1", phase="Pending")
    waiting["status"]["nominatedNodeName"] = "node2"
    state.upsert_pod(stale)
    state.upsert_pod(waiting)
    assert state.nominated_pods("node2") == 1
    bound_now = copy.deepcopy(waiting)
    bound_now["spec"]["nodeName"] = "node2"
    state.upsert_pod(bound_now)
    assert state.nominated_pods("node2") == 0


def test_daemonset_exemption_can_be_switched_off():
    strict = Config(limit_aware=LimitAwareConfig(exempt_daemonset_pods=False))
    assert not strict.limit_aware.exempts(("apps", "DaemonSet"))
    assert Config().limit_aware.exempts(("apps", "DaemonSet"))
    assert not Config().limit_aware.exempts(("apps", "ReplicaSet"))


# -- (9) room held for nominated pods (the scheduler's addNominatedPods) ---------------------------
def nominated(name: str, cpu: str, priority: int, node: str = "node2") -> dict:
    p = pod(name, cpu=cpu, phase="Pending", priority=priority)
    p["status"]["nominatedNodeName"] = node
    return p


async def test_9_a_lower_priority_binding_cannot_take_a_preemptors_room(start_server):
    state = worked_example()  # node2: 5 of 10
    state.upsert_pod(nominated("preemptor", cpu="4", priority=1000))
    state.upsert_pod(pod("low", cpu="4", phase="Pending", priority=0))
    state.upsert_pod(pod("high", cpu="4", phase="Pending", priority=2000))
    server = await start_server(state, config())
    low = await verdict(server, binding("low", "node2"))  # 5 + 4 held + 4 > 10
    assert not low["allowed"]
    assert "cpu 4 held for nominated pods of equal or higher priority" in low["status"]["message"]
    assert (await verdict(server, binding("high", "node2")))["allowed"]  # a lower nomination is not held
    state.ledger.release("default/high")
    assert (await verdict(server, binding("preemptor", "node2")))["allowed"]  # its own room
    # Once bound, the preemptor is counted on the node and no longer held as nominated.
    bound = nominated("preemptor", cpu="4", priority=1000)
    bound["spec"]["nodeName"] = "node2"
    state.upsert_pod(bound)
    assert state.nominated_room("node2", 0, "default/low") == {}
