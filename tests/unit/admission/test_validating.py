"""The validating webhook's decisions, request in, response out (no HTTP)."""

import copy

import orjson
import pytest

from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.core.config import Config, Enforcement, LimitAwareConfig, NotReadyPolicy, UnboundPolicy
from limitguard.core.ratios import MAX_RATIO_RESOURCES, RATIO_ANNOTATION
from limitguard.state.store import ClusterState
from limitguard.testing.examples import config, worked_example
from limitguard.testing.reference import ReferenceValidator
from tests.support import (
    binding,
    container,
    fixture,
    node,
    node_write,
    pod,
    pod_create,
    resize,
    review,
)


def ask(validator: Validator, body: dict):
    return validator(decode_review(orjson.dumps(body)))


def test_binding_to_a_full_node_is_denied_with_the_numbers():
    response = ask(Validator(worked_example(), config()), binding("pod5", "node1"))
    assert not response.allowed
    assert response.code == 403
    assert (
        'node "node1": cpu limit 4 exceeds remaining 0 (allocated 10 of capacity 10 = 8 allocatable x 125% '
        "(cluster default))" in (response.message)
    )
    assert "default/pod5" in response.message


def test_binding_to_a_node_with_room_is_allowed_and_held_in_the_ledger():
    state = worked_example()
    response = ask(Validator(state, config()), binding("pod5", "node2"))
    assert response.allowed and response.reason == "fits"
    assert state.allocated("node2")["cpu"] == 9000


def test_legacy_bindings_resource_is_checked_too():
    response = ask(Validator(worked_example(), config()), binding("pod5", "node1", legacy=True))
    assert not response.allowed


def test_two_bindings_that_fit_alone_but_not_together_do_not_both_pass():
    state = worked_example()
    state.upsert_pod(pod("pod6", cpu="3", phase="Pending"))
    validator = Validator(state, config())
    first = ask(validator, binding("pod5", "node2", uid="1"))  # 5 + 4 = 9 <= 10
    second = ask(validator, binding("pod6", "node2", uid="2"))  # 9 + 3 = 12 > 10, cache still stale
    assert first.allowed and not second.allowed
    assert "allocated 9 of capacity 10" in second.message


def test_dry_run_bindings_never_touch_the_ledger():
    state = worked_example()
    validator = Validator(state, config())
    assert ask(validator, binding("pod5", "node2", dry_run=True)).allowed
    assert len(state.ledger) == 0
    assert state.allocated("node2")["cpu"] == 5000


def test_the_real_k3s_binding_request_is_understood():
    request = fixture("admissionrequest-pods-binding-create-k3s.kyverno-blog.yaml")
    state = ClusterState()
    state.replace_nodes([node("k3d-kyv1111-server-0", cpu="1")])
    state.replace_pods([pod("busybox", cpu="2", phase="Pending", uid="fceccee4-4821-408a-b75b-44262392b93c")])
    state.replace_namespaces([])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    response = ask(Validator(state, config(default_ratios={"cpu": 150})), review(request))
    assert not response.allowed
    assert 'node "k3d-kyv1111-server-0": cpu limit 2 exceeds remaining 1500m' in response.message


def test_binding_for_a_different_pod_incarnation_is_not_trusted():
    state = worked_example()
    response = ask(
        Validator(
            state,
            config(),
        ),
        binding("pod5", "node2", pod_uid="some-other-uid"),
    )
    assert response.allowed and response.reason == "state-incomplete"
    assert response.warnings


def test_unknown_pod_follows_the_not_ready_policy():
    state = worked_example()
    allow = ask(Validator(state, config()), binding("ghost", "node1"))
    assert allow.allowed and allow.reason == "state-incomplete"
    deny_config = Config(
        limit_aware=LimitAwareConfig(default_ratios={"cpu": 125}), while_not_ready=NotReadyPolicy.DENY
    )
    deny = ask(Validator(state, deny_config), binding("ghost", "node1"))
    assert not deny.allowed and "not in the cache" in deny.message


@pytest.mark.parametrize(
    ("enforcement", "allowed", "action"), [("Warn", True, "warn"), ("DryRun", True, "dryrun")]
)
def test_enforcement_actions(enforcement, allowed, action):
    response = ask(
        Validator(worked_example(), config(enforcement=Enforcement(enforcement))), binding("pod5", "node1")
    )
    assert response.allowed is allowed
    assert response.action == action
    if action == "warn":
        assert response.warnings and all(len(w) < 120 for w in response.warnings)
    else:
        assert not response.warnings


def test_excluded_namespaces_are_always_allowed():
    state = worked_example()
    state.upsert_pod(pod("big", namespace="kube-system", cpu="40", phase="Pending"))
    response = ask(Validator(state, config()), binding("big", "node1", namespace="kube-system"))
    assert response.allowed and response.reason == "excluded"


def test_daemonset_pods_are_exempt_but_counted():
    state = worked_example()
    state.upsert_pod(pod("ds", cpu="1", phase="Pending", owner_kind="DaemonSet"))
    validator = Validator(state, config())
    response = ask(validator, binding("ds", "node1"))
    assert response.allowed and response.reason == "exempt-daemonset"
    assert state.allocated("node1")["cpu"] == 11000
    strict = Validator(worked_example(), config(exempt_daemonset_pods=False))
    strict.state.upsert_pod(pod("ds", cpu="1", phase="Pending", owner_kind="DaemonSet"))
    assert not ask(strict, binding("ds", "node1")).allowed


def test_pod_created_with_node_name_is_checked_against_that_node():
    validator = Validator(worked_example(), config())
    denied = ask(validator, pod_create(pod("direct", node_name="node1", cpu="1")))
    allowed = ask(validator, pod_create(pod("direct2", node_name="node2", cpu="5")))
    assert not denied.allowed and 'node "node1"' in denied.message
    assert allowed.allowed


def test_unbound_pod_with_room_somewhere_is_allowed():
    response = ask(Validator(worked_example(), config()), pod_create(pod("new", cpu="5")))
    assert response.allowed and response.reason == "fits" and not response.warnings


@pytest.mark.parametrize(
    ("policy", "allowed", "warned"), [("Warn", True, True), ("Deny", False, False), ("Ignore", True, False)]
)
def test_unbound_pod_without_room_follows_the_policy(policy, allowed, warned):
    validator = Validator(worked_example(), config(unbound_pods=UnboundPolicy(policy)))
    response = ask(validator, pod_create(pod("huge", cpu="6")))
    assert response.allowed is allowed
    assert bool(response.warnings) is warned
    if not allowed:
        assert "2 eligible nodes checked" in response.message


def test_unbound_pod_only_counts_eligible_nodes():
    state = worked_example()
    validator = Validator(state, config(unbound_pods=UnboundPolicy.DENY))
    selector_to_full_node = pod("picky", cpu="4", nodeSelector={"kubernetes.io/hostname": "node1"})
    response = ask(validator, pod_create(selector_to_full_node))
    assert not response.allowed and "1 eligible node checked" in response.message
    no_node_matches = pod("lost", cpu="4", nodeSelector={"zone": "mars"})
    assert ask(validator, pod_create(no_node_matches)).reason == "no-eligible-node"


def test_unbound_pod_respects_taints_and_cordons():
    state = worked_example()
    state.upsert_node(node("node2", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]))
    validator = Validator(state, config(unbound_pods=UnboundPolicy.DENY))
    assert not ask(validator, pod_create(pod("p", cpu="4"))).allowed
    tolerant = pod("t", cpu="4", tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert ask(validator, pod_create(tolerant)).allowed
    state.upsert_node(node("node2", unschedulable=True))
    assert not ask(validator, pod_create(tolerant)).allowed


def test_real_pod_creates_without_limits_are_allowed_untouched():
    validator = Validator(worked_example(), config())
    for name in (
        "admissionreview-v1-pod-create-gke-no-resources.kube-rs.json",
        "admissionreview-v1-pod-create-mutating-minikube-no-resources.admission-webhook-sample.json",
    ):
        response = ask(validator, fixture(name))
        assert response.allowed and response.reason == "no-limits"


def test_real_pod_create_with_resources_on_the_worked_example():
    request = fixture("admissionrequest-pod-create-with-resources-kind.kyverno.json")
    limits = [c.get("resources", {}).get("limits") for c in request["object"]["spec"]["containers"]]
    assert any(limits)
    response = ask(Validator(worked_example(), config(unbound_pods=UnboundPolicy.DENY)), review(request))
    assert response.allowed and response.reason == "fits"


def test_v1beta1_extended_resources_pod_is_checked_with_its_gpu_like_resources():
    body = fixture("admissionreview-v1beta1-pod-create-extended-resources-cpupool.nokia-cpu-pooler.json")
    state = worked_example()
    strict = config(default_ratios={"nokia.com/cpupool2": 100}, unbound_pods=UnboundPolicy.DENY)
    response = ask(Validator(state, strict), body)  # no node has nokia.com/cpupool2 allocatable
    assert not response.allowed
    assert "nokia.com/cpupool2 limit" in response.message


def test_resize_up_is_checked_without_the_pods_own_old_limits():
    state = worked_example()
    old = pod("pod3", node_name="node2", cpu="3")
    grown = pod("pod3", node_name="node2", cpu="8")  # 10 - 5 + 3 = 8 fits exactly
    too_big = pod("pod3", node_name="node2", cpu="8500m")
    validator = Validator(state, config())
    assert ask(validator, resize(old, grown)).allowed
    denied = ask(validator, resize(old, too_big))
    assert not denied.allowed and "remaining 8 (allocated 2 of capacity 10" in denied.message


def test_resize_down_always_passes_even_when_the_node_is_over():
    state = worked_example()
    state.upsert_pod(pod("extra", node_name="node1", cpu="5"))  # node1 now 15 of 10
    old = pod("pod1", node_name="node1", cpu="6", memory="1Gi")
    lower = pod("pod1", node_name="node1", cpu="5", memory="1Gi")
    response = ask(Validator(state, config()), resize(old, lower))
    assert response.allowed and response.reason == "lowered"


def test_node_annotation_writes():
    validator = Validator(worked_example(), config())
    good = ask(
        validator, node_write(node("n", annotations={RATIO_ANNOTATION: '{"cpu": 150, "memory": "120%"}'}))
    )
    assert good.allowed
    for bad, fix in (
        ('{"cpu": "150"}', 'a string needs a % sign ("150%") or use the integer 150'),
        ('{"cpu": 1.5}', "must be a whole percent, not a float"),
        ('{"cpu": -1}', "must not be negative"),
        ('{"cpu": "lots"}', 'must be a percent: 150 or "150%"'),
        ('{"not a name!": 100}', "is not a resource name (such as cpu, memory, nvidia.com/gpu)"),
        ("150%", 'expected e.g. {"cpu": 150, "memory": "120%"}'),
        ("[150]", 'expected a JSON object such as {"cpu": 150, "memory": "120%"}, got an array'),
    ):
        response = ask(validator, node_write(node("n", annotations={RATIO_ANNOTATION: bad})))
        assert not response.allowed, bad
        assert response.code == 400
        assert response.message.startswith(f"metadata.annotations[{RATIO_ANNOTATION}]: Invalid value: ")
        assert fix in response.message  # what to write instead


def test_existing_malformed_annotation_does_not_block_unrelated_node_updates():
    annotated = node("n", annotations={RATIO_ANNOTATION: '{"cpu": "150"}'})
    relabelled = copy.deepcopy(annotated)
    relabelled["metadata"]["labels"]["zone"] = "b"
    response = ask(Validator(worked_example(), config()), node_write(relabelled, old=annotated))
    assert response.allowed and response.warnings


def test_binding_to_a_node_with_a_malformed_annotation_uses_the_default_and_warns():
    state = worked_example()
    state.upsert_node(node("node2", annotations={RATIO_ANNOTATION: "garbage"}))
    response = ask(Validator(state, config()), binding("pod5", "node2"))
    assert response.allowed
    assert any("malformed" in w for w in response.warnings)


def test_annotation_replaces_the_default_map():
    state = worked_example()
    # node1 may now reach 200% cpu (capacity 16): pod5 fits; memory is no longer checked at all.
    state.upsert_node(node("node1", annotations={RATIO_ANNOTATION: '{"cpu": 200}'}))
    assert ask(
        Validator(state, config(default_ratios={"cpu": 125, "memory": 1})), binding("pod5", "node1")
    ).allowed


def test_malformed_pod_spec_is_rejected_as_bad_input():
    broken = pod("b", containers=[container(limits={"cpu": "lots"})])
    response = ask(Validator(worked_example(), config()), pod_create(broken))
    assert not response.allowed and response.code == 400 and "lots" in response.message


def test_requests_the_webhook_does_not_check_are_allowed():
    validator = Validator(worked_example(), config())
    for name in (
        "admissionrequest-pod-delete-kind.kyverno.json",
        "admissionrequest-pod-status-update-kubelet-running-kind.kyverno.json",
        "admissionrequest-pod-update-labels-kind.kyverno.json",
        "admissionreview-v1beta1-namespace-create-openshift-with-response-patch.bh-admission.json",
    ):
        body = fixture(name)
        response = ask(validator, body if "request" in body else review(body))
        assert response.allowed and response.reason == "not-checked", name


def test_a_repeated_binding_for_a_pod_already_bound_there_is_not_counted_twice():
    state = worked_example()
    validator = Validator(state, config())
    assert ask(validator, binding("pod3", "node2")).allowed  # pod3 already runs there: 5 of 10
    assert len(state.ledger) == 0
    assert state.allocated("node2")["cpu"] == 5000


def test_an_unchanged_watch_event_keeps_the_sums_and_releases_the_ledger():
    state = worked_example()
    state.ledger.reserve(
        "node2", "default/pod3", {"cpu": 3000}
    )  # e.g. reserved just before the cache caught up
    state.upsert_pod(pod("pod3", node_name="node2", cpu="3"))  # identical record
    assert len(state.ledger) == 0
    assert state.allocated("node2")["cpu"] == 5000


def test_resize_on_a_node_the_cache_does_not_know():
    validator = Validator(worked_example(), config())
    old = pod("ghost", node_name="node9", cpu="2")
    assert ask(validator, resize(old, pod("ghost", node_name="node9", cpu="1"))).reason == "lowered"
    grown = ask(validator, resize(old, pod("ghost", node_name="node9", cpu="3")))
    assert grown.allowed and grown.reason == "state-incomplete"


def test_a_ratio_annotation_over_the_resource_cap():
    """Refused on write with the cap in the message; already stored, the node falls back to the
    cluster default with a warning, like any malformed annotation."""
    names = {f"example.com/r{i}": 150 for i in range(MAX_RATIO_RESOURCES + 1)}
    huge = orjson.dumps(names).decode()
    validator = Validator(worked_example(), config())
    refused = ask(validator, node_write(node("n", annotations={RATIO_ANNOTATION: huge})))
    assert not refused.allowed and refused.code == 400
    assert f"at most {MAX_RATIO_RESOURCES} are allowed" in refused.message

    state = worked_example()
    state.upsert_node(node("node2", annotations={RATIO_ANNOTATION: huge}))
    assert state.node("node2").ratio_override is None
    response = ask(Validator(state, config()), binding("pod5", "node2"))
    assert response.allowed and any("malformed" in w for w in response.warnings)


@pytest.mark.parametrize("columnar", [True, False])
def test_a_request_counted_as_the_limit_is_named_as_one_in_every_denial(columnar):
    """A pod without limits is held to its requests; the denial says that is what it counts."""
    requested = [container(requests={"cpu": "4"})]
    state = worked_example()
    state.upsert_pod(pod("pod6", containers=requested, phase="Pending"))
    validator = (Validator if columnar else ReferenceValidator)(
        state, config(unbound_pods=UnboundPolicy.DENY)
    )
    expected = "cpu limit 4 (its request; no limit set) exceeds remaining 0"
    on_node = ask(validator, pod_create(pod("web", node_name="node1", containers=requested)))
    bound = ask(validator, binding("pod6", "node1"))
    state.upsert_pod(pod("full", node_name="node2", cpu="5"))  # node2: 5 + 5 of 10, no room for 4
    unbound = ask(validator, pod_create(pod("web2", containers=requested)))
    for response in (on_node, bound, unbound):
        assert not response.allowed and expected in response.message, response.message
    limited = ask(validator, pod_create(pod("web3", node_name="node1", cpu="4")))
    assert "cpu limit 4 exceeds remaining 0" in limited.message
