"""The mutator under both orders of pod-level defaulting.

Up to 1.36 the apiserver defaults pod-level requests (from the pod-level limits or the containers'
aggregate) before the mutating admission webhooks see the pod; from 1.37
(PodLevelResourcesFixDefaulting, on by default) it does so after them, so a mutating webhook sees
the pod without the defaulted pod-level requests and validating webhooks see it with them. Rule
source: kubernetes `pkg/apis/core/v1/defaults.go` (SetDefaults_Pod's pod-level part) and the
gate's description in kubernetes/enhancements keps/sig-node/2837-pod-level-resource-spec.

Property over the generated pods of test_defaults_property: the patch limitguard answers is the
same whether or not the pod-level requests were already defaulted, and the pod it yields passes the
apiserver's resource rules once defaulting runs after it (the 1.37 order) - so no release's order
turns a valid pod into a rejected one.
"""

from __future__ import annotations

import copy

import jsonpatch
from hypothesis import HealthCheck, assume, given, settings

from limitguard.core.config import BestEffortDefaults
from limitguard.core.defaults import best_effort_patch
from limitguard.core.podresources import parse_pod_resources, with_api_defaults
from limitguard.core.podvalidation import pod_resource_errors
from tests.unit.core.test_defaults_property import defaults, pods


def _quantity(name: str, amount: int) -> str:
    return f"{amount}m" if name == "cpu" else str(amount)


def pod_level_defaulted(pod: dict) -> dict:
    """The pod as a mutating webhook saw it up to 1.36: pod-level requests already defaulted."""
    spec = pod["spec"]
    if spec.get("resources") is None:
        return pod
    model = with_api_defaults(parse_pod_resources(spec))
    out = copy.deepcopy(pod)
    resources = out["spec"]["resources"]
    requests = dict(resources.get("requests") or {})
    for name, amount in (model.pod_requests or {}).items():
        requests.setdefault(name, _quantity(name, amount))
    if requests:
        resources["requests"] = requests
    return out


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)
@given(pods(), defaults())
def test_the_patch_does_not_depend_on_when_pod_level_defaulting_runs(original, config):
    assume(pod_resource_errors(original["spec"]) == [])
    before_137 = pod_level_defaulted(original)
    patch = best_effort_patch(original, config)  # 1.37: the webhook sees the pod before defaulting
    assert patch == best_effort_patch(before_137, config)
    patched = jsonpatch.apply_patch(copy.deepcopy(original), patch)
    assert pod_resource_errors(patched["spec"]) == []  # defaulting then validation, after the webhook


def test_the_two_orders_differ_for_pods_with_pod_level_limits_only():
    """Not vacuous: a pod-level limit without a request is seen without the request in 1.37."""
    pod = {
        "metadata": {"name": "p"},
        "spec": {"resources": {"limits": {"cpu": "1"}}, "containers": [{"name": "a"}]},
    }
    assert "requests" not in pod["spec"]["resources"]
    assert pod_level_defaulted(pod)["spec"]["resources"]["requests"] == {"cpu": "1000m"}
    assert best_effort_patch(pod, _config()) == best_effort_patch(pod_level_defaulted(pod), _config()) == []


def _config() -> BestEffortDefaults:
    return BestEffortDefaults(True, {"cpu": "500m"}, {"cpu": "100m"}, require_namespace_label=False)
