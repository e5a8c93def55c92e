"""The Helm chart, rendered by the real helm binary: schemas, objects per mode, pod security, RBAC.

What the rendered webhooks and values do against the server is in test_chart_webhooks.py and
test_chart_values.py.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import SchemaNotFoundError

from tests.e2e.chart.conftest import CHART, FETCHABLE_HERE, FULLNAME, MODES, NAMESPACE, Helm, find, one
from tests.e2e.chart.rendered import (
    CRD_KINDS,
    KUBERNETES_VERSION,
    WRITE_VERBS,
    Render,
    webhooks,
)


# -- helm itself ---------------------------------------------------------------------------------
def test_helm_is_the_fetched_binary(helm: Helm) -> None:
    """Not the machine's unrelated helm: the one scripts/fetch-tools.sh extracted (helm 4, k8s 1.35)."""
    if not FETCHABLE_HERE:
        pytest.skip("scripts/fetch-tools.sh has no helm for this platform: the user's own helm is used")
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
            pytest.fail(
                f"{obj['kind']}/{obj['metadata']['name']}: {'.'.join(map(str, error.path))}: {error.message}"
            )
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
    common = [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "MutatingWebhookConfiguration",
        "Pod",
        "PodDisruptionBudget",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
        "ValidatingWebhookConfiguration",
        # the node-write policy, and the uninstall hook that takes the labels and taint off the nodes
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        *("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Job"),
    ]
    assert kinds("default") == kinds("generate")
    assert kinds("default") == sorted(
        [*common, "ClusterRole", "ClusterRoleBinding", "Job", "Job", "Role", "RoleBinding", "ServiceAccount"]
    )
    assert kinds("certManager") == sorted([*common, "Certificate", "Certificate", "Issuer", "Issuer"])
    assert kinds("certManager-issuer") == sorted([*common, "Certificate"])
    assert kinds("provided") == sorted(common)


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
    objects = render("default")
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
    assert (
        "requiredDuringSchedulingIgnoredDuringExecution"
        in hard["template"]["spec"]["affinity"]["podAntiAffinity"]
    )
    assert hard["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}
    assert (
        "priorityClassName"
        not in one(render("default", "priorityClassName="), "Deployment")["spec"]["template"]["spec"]
    )
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
    return [
        (role, rule) for role in objects if role["kind"] in ("Role", "ClusterRole") for rule in role["rules"]
    ]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rbac_grants_no_write_verb_except_the_scoped_ones(render: Render, mode: str) -> None:
    objects = render(mode)
    server_role = one(objects, "ClusterRole", FULLNAME)
    assert server_role["rules"] == [
        {"apiGroups": [""], "resources": ["nodes", "pods", "namespaces"], "verbs": ["get", "list", "watch"]},
        # the room labels and taint, confined by the ValidatingAdmissionPolicy (test_chart_node_writes)
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]},
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
            # Leader election: the release namespace only; update only of our own Lease (and, for
            # the uninstall hook, its delete).
            assert role["kind"] == "Role" and role["metadata"]["namespace"] == NAMESPACE
            assert rule["apiGroups"] == ["coordination.k8s.io"]
            assert (
                rule["verbs"] == ["create"]
                or (rule["verbs"] == ["get", "update"] and rule["resourceNames"] == [FULLNAME])
                or (rule["verbs"] == ["get", "delete"] and rule["resourceNames"] == [FULLNAME])
            )
        elif rule["resources"] == ["nodes"]:
            # The room labels and taint: the server's leader, and the uninstall hook.
            assert writes == {"patch"} and role["metadata"]["name"] in (FULLNAME, f"{FULLNAME}-cleanup")
        else:
            assert rule["resources"] == ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]
            assert writes == {"patch"} and rule["resourceNames"] == [FULLNAME]
    writes_beyond_leases = any(
        set(rule["verbs"]) & WRITE_VERBS
        for _, rule in _rules(objects)
        if rule["resources"] not in (["leases"], ["nodes"])
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
        assert args[:5] == [
            "certs",
            f"--service={FULLNAME}",
            f"--namespace={NAMESPACE}",
            "--out=/tmp/certs",
            "--days=365",
        ]
        assert f"--secret={FULLNAME}-tls" in args
        assert job["spec"]["template"]["spec"]["serviceAccountName"] == f"{FULLNAME}-certs"
    assert [
        a for a in patch["spec"]["template"]["spec"]["containers"][0]["args"] if a.startswith("--patch")
    ] == [
        f"--patch-webhook-configuration=mutating/{FULLNAME}",
        f"--patch-webhook-configuration=validating/{FULLNAME}",
    ]
    # A renewal's new Secret keeps trusting the CA the pods serve from: it is read from caBundle.
    assert [
        a for a in create["spec"]["template"]["spec"]["containers"][0]["args"] if a.startswith("--previous")
    ] == [
        f"--previous-ca-from=mutating/{FULLNAME}",
        f"--previous-ca-from=validating/{FULLNAME}",
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
    parsed = parser.parse_args(create["spec"]["template"]["spec"]["containers"][0]["args"][1:])
    assert len(parsed.previous_ca_from) == 2 and not parsed.patch_webhook_configurations


def test_cert_manager_mode(render: Render) -> None:
    from limitguard.certs.generate import service_hostnames

    objects = render("certManager")
    serving = one(objects, "Certificate", f"{FULLNAME}-serving")
    assert serving["spec"]["dnsNames"] == service_hostnames(FULLNAME, NAMESPACE)
    assert serving["spec"]["issuerRef"] == {
        "name": f"{FULLNAME}-ca",
        "kind": "Issuer",
        "group": "cert-manager.io",
    }
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
        "name": "corp-ca",
        "kind": "ClusterIssuer",
        "group": "cert-manager.io",
    }


def test_provided_mode(render: Render, provided_ca: tuple[str, Any]) -> None:
    objects = render("provided")
    for hook in webhooks(objects).values():
        assert hook["clientConfig"]["caBundle"] == provided_ca[0]
    test_pod = one(objects, "Pod")
    env = {e["name"]: e["value"] for e in test_pod["spec"]["containers"][0]["env"]}
    assert env["LIMITGUARD_CA_PEM"] == provided_ca[1].ca_cert.decode()


@pytest.mark.parametrize("missing", ["certs.provided.secretName=", "certs.provided.caBundle="])
def test_provided_mode_requires_secret_and_ca(helm: Helm, provided_ca: tuple[str, Any], missing: str) -> None:
    result = helm.template(
        "certs.mode=provided",
        "certs.provided.secretName=s",
        f"certs.provided.caBundle={provided_ca[0]}",
        missing,
        check=False,
    )
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
