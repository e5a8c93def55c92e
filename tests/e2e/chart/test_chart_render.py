"""The Helm chart, rendered by the real helm binary and checked against what the server serves."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError

from tests.e2e.chart.conftest import CHART, FULLNAME, MODES, NAMESPACE, Helm, find, one
from limitguard.admission.review import AdmissionRequest
from limitguard.core.response import Response, allowed
from limitguard.admission.validating import Validator
from limitguard.state.store import ClusterState
from limitguard.cli.configfile import parse_config
from limitguard.core.config import Config, Enforcement
from limitguard.http.metrics import Metrics
from limitguard.http.app import Services, create_app

Render = Callable[..., list[dict[str, Any]]]
KUBERNETES_VERSION = "1.35"
CRD_KINDS = {("cert-manager.io/v1", "Issuer"), ("cert-manager.io/v1", "Certificate")}
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "*"}


def webhooks(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    hooks: dict[str, dict[str, Any]] = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for configuration in find(objects, kind):
            for hook in configuration["webhooks"]:
                hooks[hook["name"]] = {**hook, "_kind": kind, "_configuration": configuration}
    return hooks


def server_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = one(objects, "Deployment", FULLNAME)
    return deployment["spec"]["template"]["spec"]["containers"][0]


def _arg(container: dict[str, Any], flag: str) -> str:
    values = [a.split("=", 1)[1] for a in container["args"] if a.startswith(f"{flag}=")]
    assert len(values) == 1, f"{flag} given {len(values)} times in {container['args']}"
    return values[0]


# -- helm itself ---------------------------------------------------------------------------------
def test_helm_is_the_fetched_binary(helm: Helm) -> None:
    """Not the machine's unrelated helm: the one scripts/fetch-tools.sh extracted (helm 4, k8s 1.35)."""
    assert helm.binary.parent.name == "bin" and helm.binary.parent.parent.name == ".tools"
    out = helm.run("version", "--template", "{{.Version}} {{.KubeClientVersion}}").stdout
    assert out.startswith("v4.") and "v1.35" in out, out


@pytest.mark.parametrize("mode", sorted(MODES))
def test_helm_lint_strict(helm: Helm, mode: str, provided_ca: tuple[str, Any]) -> None:
    args = ["lint", "--strict", str(CHART), "--namespace", NAMESPACE]
    for item in MODES[mode] + ([f"certs.provided.caBundle={provided_ca[0]}"] if mode == "provided" else []):
        args += ["--set", item]
    result = helm.run(*args)
    assert "0 chart(s) failed" in result.stdout, result.stdout


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rendered_objects_validate_against_kubernetes_schemas(render: Render, mode: str) -> None:
    """Strict OpenAPI schemas (unknown fields are errors); only cert-manager CRDs have none."""
    objects = render(mode)
    validated, crds = 0, set()
    for obj in objects:
        try:
            version = kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except SchemaNotFoundError:
            crds.add((obj["apiVersion"], obj["kind"]))
            continue
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {'.'.join(map(str, error.path))}: {error.message}")
        assert version == KUBERNETES_VERSION
        validated += 1
    assert crds <= CRD_KINDS
    assert bool(crds) == mode.startswith("certManager")
    assert validated >= 9


def test_schema_validation_catches_mistakes(render: Render) -> None:
    """The strict 1.35 schemas do reject what the apiserver would: the check above has teeth."""
    import copy

    configuration = copy.deepcopy(one(render(), "ValidatingWebhookConfiguration"))
    configuration["webhooks"][0]["sideEffect"] = "None"  # a typo: unknown field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(configuration, KUBERNETES_VERSION, strict=True)
    deployment = copy.deepcopy(one(render(), "Deployment"))
    deployment["spec"]["replicas"] = "2"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_expected_objects_per_mode(render: Render) -> None:
    kinds = lambda mode: sorted(o["kind"] for o in render(mode))  # noqa: E731
    common = ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "MutatingWebhookConfiguration",
              "Pod", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount",
              "ValidatingWebhookConfiguration"]
    assert kinds("default") == kinds("generate")
    assert kinds("default") == sorted([*common, "ClusterRole", "ClusterRoleBinding", "Job", "Job", "Role",
                                       "RoleBinding", "ServiceAccount"])
    assert kinds("certManager") == sorted([*common, "Certificate", "Certificate", "Issuer", "Issuer"])
    assert kinds("certManager-issuer") == sorted([*common, "Certificate"])
    assert kinds("provided") == sorted(common)


# -- webhooks vs the server -----------------------------------------------------------------------
def test_webhook_paths_and_ports_match_the_server(render: Render) -> None:
    state, config = ClusterState(), Config()
    services = Services(state, config, {"validate": Validator(state, config), "mutate": lambda r: None},
                        Metrics(state, config))
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
            expected = "/mutate" if hook["_kind"].startswith("Mutating") else "/validate"
            assert ref["path"] == expected
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
            requests.append(AdmissionRequest(
                "admission.k8s.io/v1", "uid", rule["apiGroups"][0], name, sub, "Kind", operation,
                "team-a", "obj", {"metadata": {"name": "obj", "namespace": "team-a"}}, None, False,
            ))
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
    covered: set[tuple[str, str, str]] = set()
    for name, hook in webhooks(render()).items():
        if hook["_kind"].startswith("Mutating"):
            continue
        for rule in hook["rules"]:
            for request in _requests_for(rule):
                covered.add((request.group, request.target, request.operation))
                reason = validator(request).reason
                assert reason != "not-checked", f"{name}: {request.target} {request.operation} is not checked"
    assert len(configmaps_seen) == 2  # CREATE and UPDATE
    assert set(validator._routes) <= covered


def test_webhook_rules_and_settings(render: Render) -> None:
    hooks = webhooks(render())
    assert set(hooks) == {"defaults.limitguard.io", "pods.limitguard.io", "bindings.limitguard.io",
                          "resize.limitguard.io", "nodes.limitguard.io", "configmaps.limitguard.io"}
    rules = {name: [(r["resources"], r["operations"], r["scope"]) for r in h["rules"]] for name, h in hooks.items()}
    assert rules == {
        "defaults.limitguard.io": [(["pods"], ["CREATE"], "Namespaced")],
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
    policies = {name: hook["failurePolicy"] for name, hook in hooks.items()}
    assert policies == {
        "defaults.limitguard.io": "Ignore", "pods.limitguard.io": "Ignore", "bindings.limitguard.io": "Ignore",
        "resize.limitguard.io": "Ignore", "nodes.limitguard.io": "Ignore", "configmaps.limitguard.io": "Fail",
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
    hooks = webhooks(render("default", "webhooks.configmaps.checkKubeSystem=true", "config.excludedNamespaces={batch}"))
    (configmaps,) = hooks["configmaps.limitguard.io"]["namespaceSelector"]["matchExpressions"]
    assert configmaps["values"] == [NAMESPACE, "batch"]
    (pods,) = hooks["pods.limitguard.io"]["namespaceSelector"]["matchExpressions"]
    assert pods["values"] == [NAMESPACE, "kube-system", "batch"]


def test_failure_policies_and_switches_come_from_values(render: Render) -> None:
    objects = render("default", "webhooks.pods.failurePolicy=Fail", "webhooks.configmaps.failurePolicy=Ignore",
                     "webhooks.resize.enabled=false", "webhooks.pods.timeoutSeconds=7")
    hooks = webhooks(objects)
    assert hooks["pods.limitguard.io"]["failurePolicy"] == "Fail"
    assert hooks["pods.limitguard.io"]["timeoutSeconds"] == 7
    assert hooks["configmaps.limitguard.io"]["failurePolicy"] == "Ignore"
    assert "resize.limitguard.io" not in hooks
    objects = render("default", "webhooks.defaults.enabled=false")
    assert not find(objects, "MutatingWebhookConfiguration")
    patch_job = one(objects, "Job", f"{FULLNAME}-certs-patch")
    args = patch_job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--patch")] == [f"--patch-webhook-configuration=validating/{FULLNAME}"]


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
        assert _cel(condition["expression"], {"object": obj, "oldObject": None, "request": request}) is expected, obj


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


# -- configuration -------------------------------------------------------------------------------
def _config(objects: list[dict[str, Any]]) -> Config:
    configmap = one(objects, "ConfigMap", f"{FULLNAME}-config")
    return parse_config(yaml.safe_load(configmap["data"]["config.yaml"]))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_configuration_configmap_loads_in_limitguard(render: Render, mode: str) -> None:
    config = _config(render(mode))
    assert config.limit_aware.enforcement is Enforcement.DENY
    assert config.limit_aware.default_ratios == {}
    assert config.best_effort_defaults.enabled


def test_configuration_values_reach_the_server(render: Render, tmp_path: Path) -> None:
    objects = render(
        "default",
        "config.limitAware.defaultLimitToAllocatableRatio.cpu=150",
        "config.limitAware.defaultLimitToAllocatableRatio.memory=120%",
        "config.limitAware.enforcement=Warn",
        "config.limitAware.bindingLedgerTTLSeconds=30",
        "config.bestEffortDefaults.limits.cpu=2",
        "config.whileNotReady=Deny",
    )
    config = _config(objects)
    assert set(config.limit_aware.default_ratios) == {"cpu", "memory"}
    assert config.limit_aware.enforcement is Enforcement.WARN
    assert config.limit_aware.binding_ledger_ttl_seconds == 30
    assert config.best_effort_defaults.limits["cpu"] == 2 or config.best_effort_defaults.limits["cpu"] == "2"
    assert config.while_not_ready.value == "Deny"
    # The file as mounted is what `limitguard serve --config` loads.
    from limitguard.cli.configfile import load_config

    path = tmp_path / "config.yaml"
    path.write_text(one(objects, "ConfigMap", f"{FULLNAME}-config")["data"]["config.yaml"])
    assert load_config(path) == config
    # ...and a config change rolls the pods.
    checksum = lambda objs: one(objs, "Deployment")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]  # noqa: E731
    assert checksum(objects) != checksum(render("default"))


def test_server_mounts_configuration_and_certificates(render: Render) -> None:
    for mode, secret in (("default", f"{FULLNAME}-tls"), ("certManager", f"{FULLNAME}-tls"),
                         ("provided", "my-webhook-tls")):
        objects = render(mode)
        spec = one(objects, "Deployment")["spec"]["template"]["spec"]
        container = spec["containers"][0]
        assert container["args"][0] == "serve"
        assert _arg(container, "--config") == "/etc/limitguard/config.yaml"
        assert _arg(container, "--cert-dir") == "/etc/limitguard/tls"
        assert not any(a.startswith("--cluster") for a in container["args"])
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        assert volumes[mounts["/etc/limitguard/config.yaml"]["name"]]["configMap"]["name"] == f"{FULLNAME}-config"
        tls = mounts["/etc/limitguard/tls"]
        assert "subPath" not in tls and tls["readOnly"]  # subPath mounts never receive renewed files
        assert volumes[tls["name"]]["secret"]["secretName"] == secret
        if mode == "certManager":
            certificate = one(objects, "Certificate", f"{FULLNAME}-serving")
            assert certificate["spec"]["secretName"] == secret


# -- pod security, availability ------------------------------------------------------------------
def _pod_specs(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    specs = []
    for obj in objects:
        if obj["kind"] == "Pod":
            specs.append((obj["metadata"]["name"], obj["spec"]))
        elif obj["kind"] in ("Deployment", "Job"):
            specs.append((obj["metadata"]["name"], obj["spec"]["template"]["spec"]))
    return specs


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_pod_meets_restricted_pod_security(render: Render, mode: str) -> None:
    specs = _pod_specs(render(mode))
    assert specs
    for name, spec in specs:
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] != 0, name
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", name
        assert not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC"), name
        for volume in spec.get("volumes", []):
            assert "hostPath" not in volume, name
        for container in spec["containers"]:
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["capabilities"]["drop"] == ["ALL"] and "add" not in security["capabilities"], name
            assert not security.get("privileged"), name
            assert container["resources"]["requests"] and container["resources"]["limits"], name


def test_deployment_availability(render: Render) -> None:
    objects = render("default", "priorityClassName=system-cluster-critical")
    deployment = one(objects, "Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    pod = spec["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["automountServiceAccountToken"] is True
    (term,) = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == spec["selector"]["matchLabels"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    pdb = one(objects, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1 and pdb["spec"]["selector"] == spec["selector"]
    hard = one(render("default", "podAntiAffinity=hard"), "Deployment")["spec"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" in hard["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert hard["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}
    assert "priorityClassName" not in one(render("default"), "Deployment")["spec"]["template"]["spec"]
    assert not find(render("default", "replicaCount=1"), "PodDisruptionBudget")  # it would block every drain


@pytest.mark.parametrize("mode", sorted(MODES))
def test_only_the_server_pods_match_the_service_and_pdb(render: Render, mode: str) -> None:
    """Hook Job and test pods sharing the selector would receive admission traffic and count in the PDB."""
    objects = render(mode)
    selector = one(objects, "Service")["spec"]["selector"]
    assert selector == one(objects, "Deployment")["spec"]["selector"]["matchLabels"]
    assert one(objects, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == selector
    for obj in objects:
        if obj["kind"] == "Pod":
            labels = obj["metadata"]["labels"]
        elif obj["kind"] == "Job":
            labels = obj["spec"]["template"]["metadata"]["labels"]
        else:
            continue
        assert not all(labels.get(k) == v for k, v in selector.items()), obj["metadata"]["name"]


# -- RBAC ----------------------------------------------------------------------------------------
def _rules(objects: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(role, rule) for role in objects if role["kind"] in ("Role", "ClusterRole") for rule in role["rules"]]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rbac_grants_no_write_verb_except_the_scoped_ones(render: Render, mode: str) -> None:
    objects = render(mode)
    server_role = one(objects, "ClusterRole", FULLNAME)
    assert server_role["rules"] == [
        {"apiGroups": [""], "resources": ["nodes", "pods", "namespaces"], "verbs": ["get", "list", "watch"]}
    ]
    for role, rule in _rules(objects):
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], role["metadata"]["name"]
        writes = set(rule["verbs"]) & WRITE_VERBS
        if not writes:
            if rule["resources"] == ["secrets"]:
                assert rule["resourceNames"] == [f"{FULLNAME}-tls"]  # reading Secrets: only ours
            continue
        if rule["resources"] == ["secrets"]:
            # `create` cannot be limited by resourceNames: a namespaced Role in the release namespace.
            assert role["kind"] == "Role" and role["metadata"]["namespace"] == NAMESPACE
            assert writes == {"create"} and rule["verbs"] == ["create"]
        elif rule["resources"] == ["leases"]:
            # Leader election: the release namespace only; update only of our own Lease.
            assert role["kind"] == "Role" and role["metadata"]["namespace"] == NAMESPACE
            assert rule["apiGroups"] == ["coordination.k8s.io"]
            assert rule["verbs"] == ["create"] or (
                rule["verbs"] == ["get", "update"] and rule["resourceNames"] == [FULLNAME]
            )
        else:
            assert rule["resources"] == ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]
            assert writes == {"patch"} and rule["resourceNames"] == [FULLNAME]
    writes_beyond_leases = any(
        set(rule["verbs"]) & WRITE_VERBS for _, rule in _rules(objects) if rule["resources"] != ["leases"]
    )
    assert writes_beyond_leases == (mode in ("default", "generate"))
    for binding in find(objects, "RoleBinding") + find(objects, "ClusterRoleBinding"):
        (subject,) = binding["subjects"]
        assert subject["kind"] == "ServiceAccount" and subject["namespace"] == NAMESPACE


def test_generate_mode_hooks(render: Render) -> None:
    objects = render("generate")
    create = one(objects, "Job", f"{FULLNAME}-certs-create")
    patch = one(objects, "Job", f"{FULLNAME}-certs-patch")
    # The Secret exists before the Deployment (so `--wait` and GitOps health checks pass); caBundle is
    # patched once the webhook configurations exist.
    assert create["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert patch["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
    for job in (create, patch):
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[:5] == ["certs", f"--service={FULLNAME}", f"--namespace={NAMESPACE}", "--out=/tmp/certs",
                            "--days=3650"]
        assert f"--secret={FULLNAME}-tls" in args
        assert job["spec"]["template"]["spec"]["serviceAccountName"] == f"{FULLNAME}-certs"
    assert [a for a in patch["spec"]["template"]["spec"]["containers"][0]["args"] if a.startswith("--patch")] == [
        f"--patch-webhook-configuration=mutating/{FULLNAME}", f"--patch-webhook-configuration=validating/{FULLNAME}"
    ]
    for kind in ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"):
        annotations = one(objects, kind, f"{FULLNAME}-certs")["metadata"]["annotations"]
        assert int(annotations["helm.sh/hook-weight"]) < 0  # before the Jobs of the same phase
        assert "hook-succeeded" in annotations["helm.sh/hook-delete-policy"]  # gone once done
    # The chart never renders caBundle itself in this mode, so re-rendering never clears the patched one.
    for hook in webhooks(objects).values():
        assert "caBundle" not in hook["clientConfig"]
    # The Job's flags exist in the real CLI.
    import argparse

    from limitguard.cli import certs as certs_command

    parser = argparse.ArgumentParser()
    certs_command.add_arguments(parser)
    parsed = parser.parse_args(patch["spec"]["template"]["spec"]["containers"][0]["args"][1:])
    assert parsed.secret == f"{FULLNAME}-tls" and len(parsed.patch_webhook_configurations) == 2


def test_cert_manager_mode(render: Render) -> None:
    from limitguard.certs.generate import service_hostnames

    objects = render("certManager")
    serving = one(objects, "Certificate", f"{FULLNAME}-serving")
    assert serving["spec"]["dnsNames"] == service_hostnames(FULLNAME, NAMESPACE)
    assert serving["spec"]["issuerRef"] == {"name": f"{FULLNAME}-ca", "kind": "Issuer", "group": "cert-manager.io"}
    ca = one(objects, "Certificate", f"{FULLNAME}-ca")
    assert ca["spec"]["isCA"] is True
    assert one(objects, "Issuer", f"{FULLNAME}-ca")["spec"]["ca"]["secretName"] == ca["spec"]["secretName"]
    assert one(objects, "Issuer", f"{FULLNAME}-selfsigned")["spec"] == {"selfSigned": {}}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        annotations = one(objects, kind)["metadata"]["annotations"]
        assert annotations["cert-manager.io/inject-ca-from"] == f"{NAMESPACE}/{FULLNAME}-serving"
    for hook in webhooks(objects).values():
        assert "caBundle" not in hook["clientConfig"]
    custom = render("certManager-issuer")
    assert one(custom, "Certificate")["spec"]["issuerRef"] == {
        "name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}


def test_provided_mode(render: Render, provided_ca: tuple[str, Any]) -> None:
    objects = render("provided")
    for hook in webhooks(objects).values():
        assert hook["clientConfig"]["caBundle"] == provided_ca[0]
    test_pod = one(objects, "Pod")
    env = {e["name"]: e["value"] for e in test_pod["spec"]["containers"][0]["env"]}
    assert env["LIMITGUARD_CA_PEM"] == provided_ca[1].ca_cert.decode()


@pytest.mark.parametrize("missing", ["certs.provided.secretName=", "certs.provided.caBundle="])
def test_provided_mode_requires_secret_and_ca(helm: Helm, provided_ca: tuple[str, Any], missing: str) -> None:
    result = helm.template("certs.mode=provided", "certs.provided.secretName=s",
                           f"certs.provided.caBundle={provided_ca[0]}", missing, check=False)
    assert result.returncode != 0
    assert missing.split("=")[0].split(".")[-1] in result.stderr


@pytest.mark.parametrize("mode", sorted(MODES))
def test_helm_test_pod_runs_the_checked_script_against_the_service(render: Render, mode: str) -> None:
    objects = render(mode)
    pod = one(objects, "Pod", f"{FULLNAME}-test-admission")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    (container,) = pod["spec"]["containers"]
    assert container["command"] == ["python", "-c"]
    assert container["args"] == [(CHART / "files" / "admission-test.py").read_text()]
    env = {e["name"]: e["value"] for e in container["env"]}
    service = one(objects, "Service", FULLNAME)
    assert env["LIMITGUARD_SERVICE_HOST"] == f"{FULLNAME}.{NAMESPACE}.svc"
    assert int(env["LIMITGUARD_PORT"]) == service["spec"]["ports"][0]["port"]
    if mode != "provided":
        (volume,) = pod["spec"]["volumes"]
        assert volume["secret"]["items"] == [{"key": "ca.crt", "path": "ca.crt"}]
        assert env["LIMITGUARD_CA_FILE"] == "/etc/limitguard/tls/ca.crt"
    assert not find(render(mode, "tests.enabled=false"), "Pod")


# -- values.schema.json --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ("replicaCount=abc", "replicaCount"),
        ("replicaCount=0", "replicaCount"),
        ("webhooks.bindings.failurePolicy=Fail", "failurePolicy"),
        ("webhooks.pods.failurePolicy=Sometimes", "failurePolicy"),
        ("webhooks.pods.timeoutSeconds=31", "timeoutSeconds"),
        ("webhooks.pods.enabled=maybe", "enabled"),
        ("certs.mode=selfSigned", "mode"),
        ("config.limitAware.enforcement=Block", "enforcement"),
        ("config.limitAware.defaultLimitToAllocatableRatio.cpu=150percent", "cpu"),
        ("config.excludedNamespaces={Not_A_Name}", "excludedNamespaces"),
        ("image.pullPolicy=Sometimes", "pullPolicy"),
        ("containerPort=443", "containerPort"),
        ("podAntiAffinity=strict", "podAntiAffinity"),
        ("resources.limits.cpu=lots", "cpu"),
        ("replicaCont=2", "replicaCont"),
        ("certs.certManager.issuerRef.group=cert-manager.io", "issuerRef"),
    ],
)
def test_values_schema_rejects_wrong_values(helm: Helm, setting: str, complaint: str) -> None:
    result = helm.template(setting, check=False)
    assert result.returncode != 0, f"--set {setting} was accepted"
    assert "schema" in result.stderr.lower() and complaint in result.stderr, result.stderr


def test_values_schema_covers_every_value() -> None:
    """Every object in the schema closes its keys, and values.yaml validates: so every value is described."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(values)

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, f"{where} accepts unknown keys"
            for key, child in node.items():
                walk(child, f"{where}.{key}")
        elif isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, f"{where}[{index}]")

    walk(schema, "$")

    def keys(node: Any, prefix: str = "") -> set[str]:
        if not isinstance(node, dict):
            return set()
        out = set()
        for key, child in node.items():
            out.add(prefix + key)
            out |= keys(child, prefix + key + ".") if key not in FREE_MAPS else set()
        return out

    def schema_keys(node: dict[str, Any], prefix: str = "") -> set[str]:
        node = _resolve(schema, node)
        out = set()
        for key, child in node.get("properties", {}).items():
            out.add(prefix + key)
            if key not in FREE_MAPS:
                out |= schema_keys(child, prefix + key + ".")
        return out

    assert keys(values) <= schema_keys(schema)


FREE_MAPS = {"annotations", "podAnnotations", "podLabels", "nodeSelector", "affinity", "resources",
             "defaultLimitToAllocatableRatio", "limits", "requests", "issuerRef", "labels"}


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref:
        return schema["definitions"][ref.rsplit("/", 1)[1]]
    return node


def test_chart_defaults_match_the_configuration_schema_defaults() -> None:
    """values.yaml's config block must not drift from limitguard's own defaults."""
    values = yaml.safe_load((CHART / "values.yaml").read_text())["config"]
    schema = json.loads((Path(CHART).parents[1] / "schemas" / "limitguard-config.schema.json").read_text())
    limit_aware = schema["properties"]["limitAware"]["properties"]
    for key, spec in limit_aware.items():
        assert values["limitAware"][key] == spec["default"], key
    defaults = schema["properties"]["bestEffortDefaults"]["properties"]
    for key, spec in defaults.items():
        assert values["bestEffortDefaults"][key] == spec["default"], key
    assert values["whileNotReady"] == schema["properties"]["whileNotReady"]["default"]
    for key, spec in schema["properties"]["replicas"]["properties"].items():
        assert values["replicas"][key] == spec["default"], key


# -- NOTES.txt -----------------------------------------------------------------------------------
def _notes(helm: Helm, *settings: str) -> str:
    args = ["install", "lg", str(CHART), "--namespace", NAMESPACE, "--dry-run=client"]
    for item in settings:
        args += ["--set", item]
    return helm.run(*args).stdout.split("NOTES:", 1)[1]


def test_notes_warn_about_risky_choices(helm: Helm) -> None:
    safe = _notes(helm, "config.limitAware.defaultLimitToAllocatableRatio.cpu=150")
    assert "WARNINGS" not in safe and f"helm test lg -n {NAMESPACE}" in safe
    risky = _notes(helm, "replicaCount=1", "webhooks.pods.failurePolicy=Fail")
    assert "replicaCount is 1 while webhooks pods, configmaps use failurePolicy Fail" in risky
    assert "webhooks.pods.failurePolicy is Fail" in risky
    assert "defaultLimitToAllocatableRatio is empty" in risky
    assert "enforcement is DryRun" in _notes(helm, "config.limitAware.enforcement=DryRun")
    assert "podDisruptionBudget is disabled" in _notes(helm, "podDisruptionBudget.enabled=false")
    assert "no PodDisruptionBudget was created" in risky


def test_extender_service_and_scorers(render: Render) -> None:
    assert not [o for o in render("default") if o["metadata"]["name"].endswith("-extender")]
    objects = render(
        "default",
        "extender.service.enabled=true",
        "extender.service.clusterIP=10.96.0.200",
        "extender.scorers[0].name=LimitAware",
        "extender.scorers[0].weight=2",
        "extender.scorers[0].args.kind=LimitAwareArgs",
        "extender.scorers[0].args.scoringResourceWeights.cpu=1",
        "extender.scorers[1].name=PodState",
        "extender.scorers[1].weight=1",
    )
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    service = services[f"{FULLNAME}-extender"]
    assert service["spec"]["clusterIP"] == "10.96.0.200"
    assert service["spec"]["selector"] == services[FULLNAME]["spec"]["selector"]
    assert service["spec"]["ports"][0]["targetPort"] == "https"
    config = _config(objects)
    assert [(scorer.name, scorer.weight) for scorer in config.scorers] == [("LimitAware", 2), ("PodState", 1)]


# -- replicas ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", sorted(MODES))
def test_replicas_get_their_identity_lease_and_peer_tls(render: Render, mode: str) -> None:
    """Downward API identity, the Lease name RBAC allows, and a CA that verifies the leader's certificate."""
    objects = render(mode)
    container = server_container(objects)
    env = {item["name"]: item["valueFrom"]["fieldRef"]["fieldPath"] for item in container["env"]}
    assert env == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_IP": "status.podIP"}
    assert _arg(container, "--lease-name") == FULLNAME
    assert _arg(container, "--peer-server-name") == f"{FULLNAME}.{NAMESPACE}.svc"
    (role,) = [r for r in find(objects, "Role") if any(rule["resources"] == ["leases"] for rule in r["rules"])]
    assert role["metadata"]["namespace"] == NAMESPACE
    (binding,) = [b for b in find(objects, "RoleBinding") if b["roleRef"]["name"] == role["metadata"]["name"]]
    assert binding["subjects"][0]["name"] == one(objects, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]
    # The replica-to-replica port is the serving port the Lease advertises (POD_IP:containerPort).
    assert [port["containerPort"] for port in container["ports"]] == [8443]
    assert _arg(container, "--port") == "8443"
    if mode == "provided":
        assert _arg(container, "--peer-ca-file") == "/etc/limitguard/peer-ca.crt"
        configmap = one(objects, "ConfigMap", f"{FULLNAME}-config")
        assert configmap["data"]["peer-ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        assert mounts["/etc/limitguard/peer-ca.crt"]["subPath"] == "peer-ca.crt"
    else:
        assert not [a for a in container["args"] if a.startswith("--peer-ca-file")]  # ca.crt of the TLS Secret


def test_replicas_config_values_reach_the_server(render: Render) -> None:
    config = _config(render("default", "config.replicas.noLeaderPolicy=Deny", "config.replicas.leaseDurationSeconds=30",
                            "config.replicas.renewDeadlineSeconds=20"))
    assert config.replicas.no_leader_policy.value == "Deny"
    assert (config.replicas.lease_duration_seconds, config.replicas.renew_deadline_seconds) == (30, 20.0)

