"""The chart's webhook configurations checked against what the server serves, CEL conditions evaluated."""

from __future__ import annotations

import asyncio
from inspect import iscoroutine
from typing import Any

import pytest

from limitguard.admission.review import AdmissionRequest
from limitguard.admission.validating import Validator
from limitguard.core.config import Config
from limitguard.core.response import Response, allowed
from limitguard.http.app import Services, create_app
from limitguard.http.metrics import Metrics
from limitguard.state.store import ClusterState
from tests.e2e.chart.conftest import FULLNAME, MODES, NAMESPACE, find, one
from tests.e2e.chart.rendered import (
    Render,
    _arg,
    _config,
    server_container,
    webhooks,
)


# -- webhooks vs the server -----------------------------------------------------------------------
def test_webhook_paths_and_ports_match_the_server(render: Render) -> None:
    state, config = ClusterState(), Config()
    services = Services(
        state,
        config,
        {
            "validate": Validator(state, config),
            **{name: (lambda r: None) for name in ("mutate", "mutate-defaults", "mutate-placement")},
        },
        Metrics(state, config),
    )
    app = create_app(services)
    post_paths = {r.resource.canonical for r in app.router.routes() if r.method == "POST"}
    get_paths = {r.resource.canonical for r in app.router.routes() if r.method == "GET"}
    for mode in MODES:
        objects = render(mode)
        service = one(objects, "Service", FULLNAME)
        container = server_container(objects)
        (port,) = service["spec"]["ports"]
        container_port = {p["name"]: p["containerPort"] for p in container["ports"]}[port["targetPort"]]
        assert int(_arg(container, "--port")) == container_port == 8443
        for name, hook in webhooks(objects).items():
            ref = hook["clientConfig"]["service"]
            assert (ref["name"], ref["namespace"], ref["port"]) == (FULLNAME, NAMESPACE, port["port"]), name
            assert ref["path"] in post_paths, name
            expected = {
                "defaults.limitguard.io": "/mutate-defaults",
                "placement.limitguard.io": "/mutate-placement",
            }
            assert ref["path"] == expected.get(name, "/validate"), name
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            http = container[probe]["httpGet"]
            assert http["scheme"] == "HTTPS" and http["port"] == "https" and http["path"] in get_paths
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def _requests_for(rule: dict[str, Any]) -> list[AdmissionRequest]:
    requests = []
    for resource in rule["resources"]:
        name, _, sub = resource.partition("/")
        for operation in rule["operations"]:
            requests.append(
                AdmissionRequest(
                    "admission.k8s.io/v1",
                    "uid",
                    rule["apiGroups"][0],
                    name,
                    sub,
                    "Kind",
                    operation,
                    "team-a",
                    "obj",
                    {"metadata": {"name": "obj", "namespace": "team-a"}},
                    None,
                    False,
                )
            )
    return requests


def test_every_validating_rule_reaches_a_server_check_and_every_check_has_a_rule(render: Render) -> None:
    """A rule the server answers `not-checked` would be dead weight on the apiserver; a server route
    without a rule would never be called."""
    state, config = ClusterState(), Config()
    configmaps_seen: list[Any] = []

    def configmap_check(configmap: Any) -> Response:
        configmaps_seen.append(configmap)
        return allowed("checked")

    validator = Validator(state, config, configmap_check)
    covered: set[tuple[str, str, str, str]] = set()
    for name, hook in webhooks(render()).items():
        if hook["_kind"].startswith("Mutating"):
            continue
        for rule in hook["rules"]:
            for request in _requests_for(rule):
                covered.add((request.group, request.resource, request.sub_resource, request.operation))
                answer = validator(request)  # a ConfigMap's is a coroutine: validated off the loop
                reason = (asyncio.run(answer) if iscoroutine(answer) else answer).reason
                assert reason != "not-checked", f"{name}: {request.target} {request.operation} is not checked"
    assert len(configmaps_seen) == 2  # CREATE and UPDATE
    assert set(validator._routes) <= covered


def test_webhook_rules_and_settings(render: Render) -> None:
    hooks = webhooks(render())
    assert set(hooks) == {
        "defaults.limitguard.io",
        "placement.limitguard.io",
        "pods.limitguard.io",
        "bindings.limitguard.io",
        "resize.limitguard.io",
        "nodes.limitguard.io",
        "configmaps.limitguard.io",
    }
    rules = {
        name: [(r["resources"], r["operations"], r["scope"]) for r in h["rules"]] for name, h in hooks.items()
    }
    assert rules == {
        "defaults.limitguard.io": [(["pods"], ["CREATE"], "Namespaced")],
        "placement.limitguard.io": [(["pods"], ["CREATE"], "Namespaced")],
        "pods.limitguard.io": [(["pods"], ["CREATE"], "Namespaced")],
        "bindings.limitguard.io": [(["pods/binding", "bindings"], ["CREATE"], "Namespaced")],
        "resize.limitguard.io": [(["pods/resize"], ["UPDATE"], "Namespaced")],
        "nodes.limitguard.io": [(["nodes"], ["CREATE", "UPDATE"], "Cluster")],
        "configmaps.limitguard.io": [(["configmaps"], ["CREATE", "UPDATE"], "Namespaced")],
    }
    for name, hook in hooks.items():
        assert hook["sideEffects"] == "None" and hook["admissionReviewVersions"] == ["v1"], name
        assert 1 <= hook["timeoutSeconds"] <= 10, name
    assert hooks["defaults.limitguard.io"]["reinvocationPolicy"] == "IfNeeded"
    assert hooks["placement.limitguard.io"]["reinvocationPolicy"] == "IfNeeded"
    assert hooks["placement.limitguard.io"]["timeoutSeconds"] == 1
    # listed after the defaults entry: a pod defaulted there is hinted by its new limits
    assert list(hooks).index("defaults.limitguard.io") < list(hooks).index("placement.limitguard.io")
    policies = {name: hook["failurePolicy"] for name, hook in hooks.items()}
    assert policies == {
        "defaults.limitguard.io": "Ignore",
        "placement.limitguard.io": "Ignore",
        "pods.limitguard.io": "Ignore",
        "bindings.limitguard.io": "Ignore",
        "resize.limitguard.io": "Ignore",
        "nodes.limitguard.io": "Ignore",
        "configmaps.limitguard.io": "Fail",
    }
    assert hooks["bindings.limitguard.io"]["timeoutSeconds"] <= 3


def test_namespace_selector_always_excludes_release_namespace_and_kube_system(render: Render) -> None:
    objects = render("default", "config.excludedNamespaces={monitoring,batch}")
    for name, hook in webhooks(objects).items():
        if name == "nodes.limitguard.io":
            assert "namespaceSelector" not in hook  # cluster-scoped: a selector would not apply
            continue
        (expression,) = hook["namespaceSelector"]["matchExpressions"]
        assert expression["key"] == "kubernetes.io/metadata.name" and expression["operator"] == "NotIn"
        assert expression["values"] == [NAMESPACE, "kube-system", "monitoring", "batch"], name
    # The same namespaces are excluded in the server's own configuration.
    config = _config(objects)
    assert config.excluded_namespaces == {NAMESPACE, "kube-system", "monitoring", "batch"}


def test_configmaps_webhook_can_opt_kube_system_back_in(render: Render) -> None:
    hooks = webhooks(
        render("default", "webhooks.configmaps.checkKubeSystem=true", "config.excludedNamespaces={batch}")
    )
    (configmaps,) = hooks["configmaps.limitguard.io"]["namespaceSelector"]["matchExpressions"]
    assert configmaps["values"] == [NAMESPACE, "batch"]
    (pods,) = hooks["pods.limitguard.io"]["namespaceSelector"]["matchExpressions"]
    assert pods["values"] == [NAMESPACE, "kube-system", "batch"]


def test_failure_policies_and_switches_come_from_values(render: Render) -> None:
    objects = render(
        "default",
        "webhooks.pods.failurePolicy=Fail",
        "webhooks.configmaps.failurePolicy=Ignore",
        "webhooks.resize.enabled=false",
        "webhooks.pods.timeoutSeconds=7",
    )
    hooks = webhooks(objects)
    assert hooks["pods.limitguard.io"]["failurePolicy"] == "Fail"
    assert hooks["pods.limitguard.io"]["timeoutSeconds"] == 7
    assert hooks["configmaps.limitguard.io"]["failurePolicy"] == "Ignore"
    assert "resize.limitguard.io" not in hooks
    objects = render("default", "webhooks.defaults.enabled=false", "webhooks.placement.enabled=false")
    assert not find(objects, "MutatingWebhookConfiguration")
    patch_job = one(objects, "Job", f"{FULLNAME}-certs-patch")
    args = patch_job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--patch")] == [
        f"--patch-webhook-configuration=validating/{FULLNAME}"
    ]


# -- CEL matchConditions, evaluated --------------------------------------------------------------
def _cel(expression: str, activation: dict[str, Any]) -> bool:
    celpy = pytest.importorskip("celpy", reason="cel-python evaluates the matchConditions")
    environment = celpy.Environment()
    program = environment.program(environment.compile(expression))
    return bool(program.evaluate({k: celpy.json_to_cel(v) for k, v in activation.items()}))


def test_configmap_match_condition_selects_scheduler_configurations_only(render: Render) -> None:
    (condition,) = webhooks(render())["configmaps.limitguard.io"]["matchConditions"]
    scheduler = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    cases = [
        ({"metadata": {"name": "s"}, "data": {"config.yaml": scheduler}}, True),
        ({"metadata": {"name": "s"}, "data": {"a": "x", "b": scheduler}}, True),
        ({"metadata": {"name": "s"}, "data": {"a": "kind: Deployment"}}, False),
        ({"metadata": {"name": "s"}, "data": {}}, False),
        ({"metadata": {"name": "s"}}, False),
        ({"metadata": {"name": "s"}, "binaryData": {"a": "S3ViZQ=="}}, False),
    ]
    for obj, expected in cases:
        request = {"operation": "CREATE"}
        assert (
            _cel(condition["expression"], {"object": obj, "oldObject": None, "request": request}) is expected
        ), obj


def test_node_match_condition_only_sends_ratio_annotation_changes(render: Render) -> None:
    (condition,) = webhooks(render())["nodes.limitguard.io"]["matchConditions"]
    key = "node.koordinator.sh/limit-to-allocatable"

    def node(annotations: dict[str, str] | None) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": "n1"}
        if annotations is not None:
            metadata["annotations"] = annotations
        return {"metadata": metadata}

    def matches(operation: str, new: dict[str, Any], old: dict[str, Any] | None) -> bool:
        activation = {"object": new, "oldObject": old, "request": {"operation": operation}}
        return _cel(condition["expression"], activation)

    assert matches("CREATE", node({key: '{"cpu": 150}'}), None)
    assert not matches("CREATE", node(None), None)
    assert not matches("CREATE", node({"other": "x"}), None)
    assert matches("UPDATE", node({key: '{"cpu": 150}'}), node(None))
    assert matches("UPDATE", node({key: '{"cpu": 150}'}), node({"other": "x"}))
    assert matches("UPDATE", node({key: '{"cpu": 200}'}), node({key: '{"cpu": 150}'}))
    assert not matches("UPDATE", node({key: '{"cpu": 150}', "x": "1"}), node({key: '{"cpu": 150}'}))
    assert not matches("UPDATE", node({"x": "1"}), node({key: '{"cpu": 150}'}))  # removal: nothing to check
