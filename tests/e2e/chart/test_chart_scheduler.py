"""The second scheduler (values `scheduler`): its objects, its image tag per cluster release, its
webhook entry, and its KubeSchedulerConfiguration judged by `limitguard validate --strict` (real helm)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from limitguard.core.usescheduler import USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE
from tests.e2e.chart.conftest import CHART, FULLNAME, NAMESPACE, RELEASE, Helm, find, one
from tests.e2e.chart.rendered import Render, _config, webhooks
from tests.e2e.chart.test_chart_webhooks import _cel
from tests.support import HANG_GUARD_SECONDS

ENABLED = "scheduler.enabled=true"
DEFAULT = "default-scheduler"
MIRROR = "kubernetes.io/config.mirror"
NAME = f"{FULLNAME}-scheduler"
SERVICE_DNS = f"{FULLNAME}.{NAMESPACE}.svc"
TAGS = yaml.safe_load((CHART / "values.yaml").read_text())["scheduler"]["image"]["tags"]
NEWEST = max(TAGS, key=lambda release: int(release.split(".")[1]))
# Rendering without a cluster needs the release said (a tag here); the tag tests use ENABLED alone.
ON = f"{ENABLED},scheduler.image.tag={TAGS[NEWEST]}"


def template(helm: Helm, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return helm.run("template", RELEASE, str(CHART), "--namespace", NAMESPACE, *args, check=check)


def on_cluster(
    helm: Helm, version: str, *set_args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Rendered as against a cluster of *version*: the API list a real apiserver serves includes
    apiregistration.k8s.io/v1 (what `helm install` discovers and Argo CD passes)."""
    flags = ["--kube-version", version, "--api-versions", "apiregistration.k8s.io/v1"]
    for item in (ENABLED, *set_args):
        flags += ["--set", item]
    return template(helm, *flags, check=check)


def objects_of(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def image(objects: list[dict[str, Any]]) -> str:
    return one(objects, "Deployment", NAME)["spec"]["template"]["spec"]["containers"][0]["image"]


def scheduler_configuration(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return yaml.safe_load(one(objects, "ConfigMap", f"{NAME}-config")["data"]["config.yaml"])


def validate_strict(
    objects: list[dict[str, Any]], release: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """`limitguard validate --strict` on the rendered ConfigMap, as a user would run it."""
    path = tmp_path / f"scheduler-{release}.yaml"
    path.write_text(yaml.safe_dump(one(objects, "ConfigMap", f"{NAME}-config")))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "limitguard",
            "validate",
            "--strict",
            "--kubernetes-version",
            release,
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )


def test_off_by_default(render: Render) -> None:
    objects = render()
    assert not find(objects, "Deployment", NAME) and not find(objects, "ServiceAccount", NAME)
    assert "use-scheduler.limitguard.io" not in webhooks(objects)
    assert _config(objects).use_scheduler_name == ""


def test_its_objects_and_permissions(render: Render) -> None:
    objects = render("default", ON)
    bindings = {
        b["roleRef"]["name"]: b
        for b in find(objects, "ClusterRoleBinding")
        if b["metadata"]["name"].startswith(NAME)
    }
    assert set(bindings) == {"system:kube-scheduler", "system:volume-scheduler"}
    for binding in bindings.values():
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
    reader = one(objects, "RoleBinding", f"{NAME}-authentication-reader")
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "extension-apiserver-authentication-reader",
    }
    # Its own Lease, and the Role covers exactly that one (system:kube-scheduler covers kube-scheduler's).
    election = scheduler_configuration(objects)["leaderElection"]
    assert election == {
        "leaderElect": True,
        "resourceLock": "leases",
        "resourceName": NAME,
        "resourceNamespace": NAMESPACE,
    }
    role = one(objects, "Role", f"{NAME}-leader-election")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": [NAME],
        "verbs": ["get", "update"],
    } in role["rules"]
    pod = one(objects, "Deployment", NAME)["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == NAME
    # The serving certificate's key never reaches the scheduler: only ca.crt of the TLS Secret.
    (ca,) = [v for v in pod["volumes"] if v["name"] == "ca"]
    assert ca["secret"] == {"secretName": f"{FULLNAME}-tls", "items": [{"key": "ca.crt", "path": "ca.crt"}]}


def test_the_configuration_calls_the_extender_and_the_server_knows_the_name(render: Render) -> None:
    objects = render("default", ON, "scheduler.schedulerName=exact")
    configuration = scheduler_configuration(objects)
    assert [p["schedulerName"] for p in configuration["profiles"]] == ["exact"]
    assert _config(objects).use_scheduler_name == "exact"
    (extender,) = configuration["extenders"]
    assert extender["urlPrefix"] == f"https://{SERVICE_DNS}:443/extender"
    verbs = ("filterVerb", "prioritizeVerb", "preemptVerb")
    assert [extender[verb] for verb in verbs] == ["filter", "prioritize", "preempt"]
    assert extender["nodeCacheCapable"] is True and extender["ignorable"] is False
    assert extender["enableHTTPS"] is True and extender["httpTimeout"] == "5s"
    assert extender["tlsConfig"] == {"serverName": SERVICE_DNS, "caFile": "/etc/limitguard/trust/ca.crt"}


@pytest.mark.parametrize("release", sorted(TAGS, key=lambda r: int(r.split(".")[1])))
def test_each_release_gets_its_tag_and_a_configuration_it_accepts(
    helm: Helm, release: str, tmp_path: Path
) -> None:
    objects = objects_of(on_cluster(helm, f"v{release}.3"))
    assert image(objects) == f"registry.k8s.io/kube-scheduler:{TAGS[release]}"
    result = validate_strict(objects, release, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "valid (0 errors, 0 warnings)" in result.stdout


def test_provided_certificates_and_a_client_certificate_validate(render: Render, tmp_path: Path) -> None:
    objects = render(
        "provided",
        ON,
        "clientAuth.caBundle=Q0E=",
        "clientAuth.extenderNames={limitguard-scheduler}",
        "scheduler.clientCertificateSecret=scheduler-client",
    )
    tls = scheduler_configuration(objects)["extenders"][0]["tlsConfig"]
    assert tls["caData"] and "caFile" not in tls
    assert (tls["certFile"], tls["keyFile"]) == (
        "/etc/limitguard/client/tls.crt",
        "/etc/limitguard/client/tls.key",
    )
    pod = one(objects, "Deployment", NAME)["spec"]["template"]["spec"]
    (client,) = [v for v in pod["volumes"] if v["name"] == "client"]
    assert client["secret"]["secretName"] == "scheduler-client"
    result = validate_strict(objects, NEWEST, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("version", "release"),
    [("v1.33.5-eks-7f9249a", "1.33"), ("v1.34.1-gke.1146000", "1.34"), ("v1.32.7+k3s1", "1.32")],
)
def test_a_managed_clusters_version_picks_its_minors_tag(helm: Helm, version: str, release: str) -> None:
    """Some providers report the minor field as "33+"; the tag follows the full version string."""
    assert image(objects_of(on_cluster(helm, version))).endswith(f":{TAGS[release]}")


def test_one_minor_newer_cluster_gets_the_newest_tag_and_others_must_say(helm: Helm) -> None:
    newest_minor = int(NEWEST.split(".")[1])
    assert image(objects_of(on_cluster(helm, f"1.{newest_minor + 1}.0"))).endswith(TAGS[NEWEST])
    for too_far in (f"1.{newest_minor + 2}.0", "1.30.9"):
        result = on_cluster(helm, too_far, check=False)
        assert result.returncode != 0 and "set scheduler.image.tag" in result.stderr, too_far
        assert image(objects_of(on_cluster(helm, too_far, "scheduler.image.tag=v1.36.3"))).endswith(
            ":v1.36.3"
        )


def test_without_a_cluster_rendering_asks_for_the_release(helm: Helm) -> None:
    """`helm template` alone cannot know the cluster's release (Helm's built-in version is not the
    cluster's), and the newest tag could be newer than the apiserver: it fails and says what to set."""
    for flags in (["--set", ENABLED], ["--set", ENABLED, "--kube-version", "1.33.4"]):
        result = template(helm, *flags, check=False)
        assert result.returncode != 0
        assert "set config.kubernetesVersion (e.g. 1.35) or scheduler.image.tag" in result.stderr
        assert "--kube-version alone is not read" in result.stderr
    told = objects_of(template(helm, "--set", ENABLED, "--set", "config.kubernetesVersion=v1.33.4"))
    assert image(told).endswith(TAGS["1.33"])
    tagged = objects_of(template(helm, "--set", ENABLED, "--set", "scheduler.image.tag=v1.34.10"))
    assert image(tagged).endswith(":v1.34.10")


def test_the_webhook_entry_sends_only_opted_in_default_scheduler_pods(render: Render) -> None:
    hooks = webhooks(render("default", ON, "webhooks.defaults.enabled=false"))
    assert "defaults.limitguard.io" not in hooks
    entry = hooks["use-scheduler.limitguard.io"]
    assert entry["_kind"] == "MutatingWebhookConfiguration"
    assert entry["clientConfig"]["service"]["path"] == "/mutate-scheduler"
    selector = entry["namespaceSelector"]
    assert selector["matchLabels"] == {USE_SCHEDULER_LABEL: USE_SCHEDULER_VALUE}
    assert selector["matchExpressions"][0]["values"] == [NAMESPACE, "kube-system"]
    assert [c["name"] for c in entry["matchConditions"]] == [
        "default-scheduler-unbound",
        "not-a-mirror-pod",
        "not-a-daemonset-pod",
    ]
    assert (entry["failurePolicy"], entry["timeoutSeconds"], entry["reinvocationPolicy"]) == (
        "Ignore",
        1,
        "IfNeeded",
    )
    # Both entries when defaults are on too.
    both = webhooks(render("default", ON))
    assert {"defaults.limitguard.io", "use-scheduler.limitguard.io"} <= set(both)


def test_the_webhook_entry_leaves_node_agents_and_bound_pods_out(render: Render) -> None:
    """The entry's CEL conditions, evaluated: the apiserver calls limitguard only for the pods it
    would move (DaemonSet, mirror and bound pods never reach it; the server checks the same again)."""
    conditions = webhooks(render("default", ON))["use-scheduler.limitguard.io"]["matchConditions"]

    def sent(pod: dict[str, Any]) -> bool:
        activation = {"object": pod, "oldObject": None, "request": {"operation": "CREATE"}}
        return all(_cel(condition["expression"], activation) for condition in conditions)

    def owned(kind: str, api_version: str = "apps/v1", controller: bool | None = True) -> dict[str, Any]:
        owner = {"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u"}
        if controller is not None:
            owner["controller"] = controller
        return {"metadata": {"name": "p", "ownerReferences": [owner]}, "spec": {"schedulerName": DEFAULT}}

    plain = {"metadata": {"name": "p"}, "spec": {"schedulerName": DEFAULT}}
    mirror = {"metadata": {"name": "p", "annotations": {MIRROR: "x"}}, "spec": {"schedulerName": DEFAULT}}
    annotated = {"metadata": {"name": "p", "annotations": {"a": "b"}}, "spec": {"schedulerName": DEFAULT}}
    cases = [
        (plain, True),
        (annotated, True),
        (owned("ReplicaSet"), True),
        (owned("DaemonSet", controller=False), True),  # co-owned, not controlled
        (owned("DaemonSet", controller=None), True),
        (owned("DaemonSet", "example.com/v1"), True),  # another group's kind: the server decides
        (owned("DaemonSet"), False),
        (mirror, False),
        ({"metadata": {"name": "p"}, "spec": {"schedulerName": DEFAULT, "nodeName": "n"}}, False),
        ({"metadata": {"name": "p"}, "spec": {"schedulerName": "other"}}, False),
    ]
    for pod, expected in cases:
        assert sent(pod) is expected, pod


def test_generate_mode_patches_the_mutating_configuration_for_the_scheduler_alone(render: Render) -> None:
    objects = render("generate", ON, "webhooks.defaults.enabled=false")
    job = one(objects, "Job", f"{FULLNAME}-certs-patch")
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--patch-webhook-configuration=mutating/{FULLNAME}" in args


def test_a_narrowed_network_policy_lets_the_scheduler_in(render: Render) -> None:
    objects = render(
        "default", ON, "networkPolicy.enabled=true", "networkPolicy.webhookFrom[0].ipBlock.cidr=10.0.0.0/24"
    )
    peers = one(objects, "NetworkPolicy")["spec"]["ingress"][0]["from"]
    assert {
        "podSelector": {
            "matchLabels": {
                "app.kubernetes.io/name": "limitguard",
                "app.kubernetes.io/instance": RELEASE,
                "app.kubernetes.io/component": "scheduler",
            }
        }
    } in peers


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            ["clientAuth.caBundle=Q0E=", "clientAuth.extenderNames={kube-scheduler}"],
            "scheduler.clientCertificateSecret",
        ),
        (["scheduler.schedulerName=default-scheduler"], "schedulerName"),
        (["scheduler.webhook.failurePolicy=Fail"], "failurePolicy"),
        (["scheduler.extender.httpTimeout=5"], "httpTimeout"),
        (
            ["scheduler.trust.leaderDelaySeconds=90"],
            "certs.generate.newCADelaySeconds (180) must be at least scheduler.trust.leaderDelaySeconds + 120",
        ),
        (
            ["certs.generate.newCADelaySeconds=500"],
            "scheduler.trust.overlapSeconds (600) must be at least certs.generate.newCADelaySeconds + 120",
        ),
    ],
)
def test_refused_settings(helm: Helm, settings: list[str], message: str) -> None:
    result = helm.template(ON, *settings, check=False)
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_its_pods_share_the_servers_priority_class_and_quota(helm: Helm, render: Render) -> None:
    pod = one(render("default", ON), "Deployment", NAME)["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    # The server's 2 replicas + surge and the scheduler's 2 + surge.
    result = helm.template(ON, "priorityClassQuota.pods=5", check=False)
    assert result.returncode != 0
    assert "must be at least replicaCount + 1 + scheduler.replicaCount + 1 (6)" in result.stderr
    assert helm.template(ON, "priorityClassQuota.pods=6").returncode == 0


def test_install_notes_name_it(helm: Helm) -> None:
    def notes(*settings: str) -> str:
        args = ["install", RELEASE, str(CHART), "--namespace", NAMESPACE, "--dry-run=client"]
        for item in (ENABLED, *settings):
            args += ["--set", item]
        return helm.run(*args).stdout.split("NOTES:", 1)[1]

    told = notes("config.kubernetesVersion=1.34")
    assert f"kube-scheduler:{TAGS['1.34']})" in told
    assert "limitguard.io/use-scheduler=enabled" in told and "stay Pending" in told


def test_a_drain_keeps_one_replica(render: Render) -> None:
    budget = one(render("default", ON), "PodDisruptionBudget", NAME)
    assert budget["spec"]["minAvailable"] == 1
    labels = one(render("default", ON), "Deployment", NAME)["spec"]["selector"]["matchLabels"]
    assert budget["spec"]["selector"]["matchLabels"] == labels
    assert not find(render("default", ON, "scheduler.replicaCount=1"), "PodDisruptionBudget", NAME)


def test_the_replicas_prefer_other_nodes_then_other_zones(render: Render) -> None:
    pod = one(render("default", ON), "Deployment", NAME)["spec"]["template"]["spec"]
    labels = one(render("default", ON), "Deployment", NAME)["spec"]["selector"]["matchLabels"]
    terms = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert [(t["weight"], t["podAffinityTerm"]["topologyKey"]) for t in terms] == [
        (100, "kubernetes.io/hostname"),
        (50, "topology.kubernetes.io/zone"),
    ]
    assert all(t["podAffinityTerm"]["labelSelector"]["matchLabels"] == labels for t in terms)
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in pod["affinity"]["podAntiAffinity"]
    mine = render(
        "default",
        ON,
        "scheduler.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey=x",
    )
    pod = one(mine, "Deployment", NAME)["spec"]["template"]["spec"]
    assert (
        pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"]
        == "x"
    )
    assert "preferredDuringSchedulingIgnoredDuringExecution" not in pod["affinity"]["podAntiAffinity"]


def _trust_sidecar(objects: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    pod = one(objects, "Deployment", NAME)["spec"]["template"]["spec"]
    (sidecar,) = pod["initContainers"]
    return pod, sidecar


@pytest.mark.parametrize("mode", ["default", "generate", "certManager", "certManager-issuer"])
def test_a_trust_sidecar_writes_the_bundle_and_may_restart_kube_scheduler(render: Render, mode: str) -> None:
    objects = render(mode, ON, "scheduler.clientCertificateSecret=scheduler-client")
    pod, sidecar = _trust_sidecar(objects)
    assert pod["shareProcessNamespace"] is True  # to end kube-scheduler for kubelet to restart it
    assert sidecar["restartPolicy"] == "Always"  # a native sidecar: runs beside kube-scheduler
    assert sidecar["startupProbe"]["exec"]["command"] == ["test", "-s", "/etc/limitguard/trust/ca.crt"]
    assert sidecar["image"].startswith("ghcr.io/limitguard/limitguard")
    args = sidecar["args"]
    assert args[0] == "scheduler-trust" and f"--lease={NAMESPACE}/{NAME}" in args
    assert "--bundle=/etc/limitguard/trust/ca.crt" in args
    assert {
        "--client-file=/etc/limitguard/client/tls.crt",
        "--client-file=/etc/limitguard/client/tls.key",
    } <= set(args)
    # generate mode's ca.crt lists the CAs a renewal replaced after the new one: trusted for the overlap.
    renewal = mode in ("default", "generate")
    assert ("--renewal-ca-file=/etc/limitguard/ca/ca.crt" in args) == renewal
    assert ("--ca-file=/etc/limitguard/ca/ca.crt" in args) == (not renewal)
    upcoming = [v for v in pod["volumes"] if v["name"] == "upcoming"]
    if mode == "certManager":  # the chart's own CA: its next certificate is trusted as soon as it exists
        assert "--ca-file=/etc/limitguard/upcoming/ca.crt" in args
        assert upcoming[0]["secret"] == {
            "secretName": f"{FULLNAME}-ca",
            "optional": True,
            "items": [{"key": "tls.crt", "path": "ca.crt"}],
        }
    else:
        assert not upcoming and "--ca-file=/etc/limitguard/upcoming/ca.crt" not in args
    (scheduler,) = pod["containers"]
    mounts = {m["name"]: m for m in scheduler["volumeMounts"]}
    assert mounts["trust"]["readOnly"] is True and "ca" not in mounts
    assert "POD_NAME" in [e["name"] for e in sidecar["env"]]


def test_provided_certificates_run_no_sidecar(render: Render) -> None:
    pod = one(render("provided", ON), "Deployment", NAME)["spec"]["template"]["spec"]
    assert "initContainers" not in pod and "shareProcessNamespace" not in pod
