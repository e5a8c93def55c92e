"""The chart's values: the configuration they render reaches the server, the values schema, NOTES.txt,
the extender and replicas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from limitguard.core.config import Enforcement
from tests.e2e.chart.conftest import CHART, FULLNAME, MODES, NAMESPACE, Helm, find, one
from tests.e2e.chart.rendered import (
    Render,
    _arg,
    _config,
    server_container,
)


# -- configuration -------------------------------------------------------------------------------
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
        "config.kubernetesVersion=v1.36.2",
    )
    config = _config(objects)
    assert set(config.limit_aware.default_ratios) == {"cpu", "memory"}
    assert config.limit_aware.enforcement is Enforcement.WARN
    assert config.limit_aware.binding_ledger_ttl_seconds == 30
    assert config.best_effort_defaults.limits["cpu"] == 2 or config.best_effort_defaults.limits["cpu"] == "2"
    assert config.while_not_ready.value == "Deny"
    assert config.kubernetes_version == "v1.36.2"
    assert config.scheduler_kubernetes_version is None  # ConfigMaps then take the top-level key too
    assert _config(render("default")).kubernetes_version is None  # unset: the apiserver's /version
    # The file as mounted is what `limitguard serve --config` loads.
    from limitguard.cli.configfile import load_config

    path = tmp_path / "config.yaml"
    path.write_text(one(objects, "ConfigMap", f"{FULLNAME}-config")["data"]["config.yaml"])
    assert load_config(path) == config
    # ...and a config change rolls the pods.
    checksum = lambda objs: one(objs, "Deployment")["spec"]["template"]["metadata"]["annotations"][  # noqa: E731
        "checksum/config"
    ]
    assert checksum(objects) != checksum(render("default"))


def test_node_pools_reach_the_server(render: Render) -> None:
    config = _config(
        render(
            "default",
            "config.limitAware.nodePools[0].name=gpu",
            r"config.limitAware.nodePools[0].nodeSelector.matchLabels.karpenter\.sh/nodepool=gpu",
            "config.limitAware.nodePools[0].limitToAllocatableRatio.cpu=200",
        )
    )
    [pool] = config.limit_aware.node_pools
    assert (pool.name, pool.ratios, pool.selector.matches({"karpenter.sh/nodepool": "gpu"})) == (
        "gpu",
        {"cpu": 200},
        True,
    )


def test_server_mounts_configuration_and_certificates(render: Render) -> None:
    for mode, secret in (
        ("default", f"{FULLNAME}-tls"),
        ("certManager", f"{FULLNAME}-tls"),
        ("provided", "my-webhook-tls"),
    ):
        objects = render(mode)
        spec = one(objects, "Deployment")["spec"]["template"]["spec"]
        container = spec["containers"][0]
        assert container["args"][0] == "serve"
        assert _arg(container, "--config") == "/etc/limitguard/config.yaml"
        assert _arg(container, "--cert-dir") == "/etc/limitguard/tls"
        assert not any(a.startswith("--cluster") for a in container["args"])
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        assert (
            volumes[mounts["/etc/limitguard/config.yaml"]["name"]]["configMap"]["name"]
            == f"{FULLNAME}-config"
        )
        tls = mounts["/etc/limitguard/tls"]
        assert "subPath" not in tls and tls["readOnly"]  # subPath mounts never receive renewed files
        assert volumes[tls["name"]]["secret"]["secretName"] == secret
        if mode == "certManager":
            certificate = one(objects, "Certificate", f"{FULLNAME}-serving")
            assert certificate["spec"]["secretName"] == secret


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
        ("config.kubernetesVersion=latest", "kubernetesVersion"),
        ("config.limitAware.nodePools[0].name=Not_A_Name", "nodePools"),
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


FREE_MAPS = {
    "annotations",
    "podAnnotations",
    "podLabels",
    "nodeSelector",
    "affinity",
    "resources",
    "defaultLimitToAllocatableRatio",
    "limits",
    "requests",
    "issuerRef",
    "labels",
    "tags",  # scheduler.image.tags: release -> image tag, keys checked by propertyNames
}


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref:
        return schema["definitions"][ref.rsplit("/", 1)[1]]
    return node


def test_chart_defaults_match_the_configuration_schema_defaults() -> None:
    """values.yaml's config block must not drift from limitguard's own defaults."""
    values = yaml.safe_load((CHART / "values.yaml").read_text())["config"]
    schema = json.loads(
        (
            Path(CHART).parents[1] / "webhook" / "limitguard" / "schemas" / "limitguard-config.schema.json"
        ).read_text()
    )
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
    assert env == {
        "POD_NAME": "metadata.name",
        "POD_NAMESPACE": "metadata.namespace",
        "POD_IP": "status.podIP",
    }
    assert _arg(container, "--lease-name") == FULLNAME
    assert _arg(container, "--peer-server-name") == f"{FULLNAME}.{NAMESPACE}.svc"
    (role,) = [
        r
        for r in find(objects, "Role")
        if any(rule["resources"] == ["leases"] for rule in r["rules"])
        and "helm.sh/hook" not in r["metadata"].get("annotations", {})
    ]
    assert role["metadata"]["namespace"] == NAMESPACE
    (binding,) = [b for b in find(objects, "RoleBinding") if b["roleRef"]["name"] == role["metadata"]["name"]]
    assert (
        binding["subjects"][0]["name"]
        == one(objects, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]
    )
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
        assert not [
            a for a in container["args"] if a.startswith("--peer-ca-file")
        ]  # ca.crt of the TLS Secret


def test_replicas_config_values_reach_the_server(render: Render) -> None:
    config = _config(
        render(
            "default",
            "config.replicas.noLeaderPolicy=Deny",
            "config.replicas.leaseDurationSeconds=30",
            "config.replicas.renewDeadlineSeconds=20",
        )
    )
    assert config.replicas.no_leader_policy.value == "Deny"
    assert (config.replicas.lease_duration_seconds, config.replicas.renew_deadline_seconds) == (30, 20.0)
