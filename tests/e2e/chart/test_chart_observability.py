"""The chart's opt-in observability: metrics Service, ServiceMonitor, PrometheusRule, dashboard, NetworkPolicy.

Rendered by the real helm binary; rules checked by the real promtool (Debian package prometheus), the
dashboard's and the alerts' queries checked against the metric names a real server exposes.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import SchemaNotFoundError

from limitguard.cli.serve import add_arguments as serve_arguments
from tests.e2e.chart.conftest import CHART, FULLNAME, NAMESPACE, Helm, find, one

Render = Callable[..., list[dict[str, Any]]]
KUBERNETES_VERSION = "1.35"
OPERATOR_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
}
METRICS_SERVICE = f"{FULLNAME}-metrics"
ALL_ON = (
    "metrics.serviceMonitor.enabled=true",
    "metrics.prometheusRule.enabled=true",
    "metrics.dashboard.enabled=true",
    "networkPolicy.enabled=true",
)
PLAIN = ("metrics.plainHttp.enabled=true",)


# -- rendering with every option -----------------------------------------------------------------
def test_nothing_observability_related_is_rendered_by_default(render: Render) -> None:
    objects = render()
    kinds = {o["kind"] for o in objects}
    assert not kinds & {"ServiceMonitor", "PrometheusRule", "NetworkPolicy"}
    assert not find(objects, "Service", METRICS_SERVICE) and not find(
        objects, "ConfigMap", f"{FULLNAME}-dashboard"
    )
    container = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert [p["name"] for p in container["ports"]] == ["https"]
    assert not any(a.startswith("--metrics-port") for a in container["args"])


@pytest.mark.parametrize("mode", ["default", "certManager", "provided"])
@pytest.mark.parametrize("plain", [False, True])
def test_every_option_renders_lints_and_validates(helm: Helm, render: Render, mode: str, plain: bool) -> None:
    extra = [*ALL_ON, *(PLAIN if plain else ())]
    if mode == "provided" and not plain:
        extra.append("metrics.serviceMonitor.tlsConfig.insecureSkipVerify=true")
    objects = render(mode, *extra)
    operator = []
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except SchemaNotFoundError:
            operator.append((obj["apiVersion"], obj["kind"]))
        except kubernetes_validate.ValidationError as error:
            pytest.fail(
                f"{obj['kind']}/{obj['metadata']['name']}: {'.'.join(map(str, error.path))}: {error.message}"
            )
    assert set(operator) >= OPERATOR_KINDS
    assert {kind for _, kind in operator} <= {"ServiceMonitor", "PrometheusRule", "Certificate", "Issuer"}
    args = ["lint", "--strict", str(CHART), "--namespace", NAMESPACE]
    for item in extra + (["certs.mode=certManager"] if mode == "certManager" else []):
        args += ["--set", item]
    if mode == "provided":
        args += [
            "--set",
            "certs.mode=provided",
            "--set",
            "certs.provided.secretName=my-tls",
            "--set",
            "certs.provided.caBundle=Zm9v",
        ]
    assert "0 chart(s) failed" in helm.run(*args).stdout


def test_values_schema_rejects_unknown_observability_keys(helm: Helm) -> None:
    for bad in (
        "metrics.serviceMonitor.enable=true",
        "networkPolicy.from=x",
        "metrics.plainHttp.port=80",
        "metrics.prometheusRule.disabledAlerts={NoSuchAlert}",
    ):
        result = helm.template(bad, check=False)
        assert (
            result.returncode != 0 and "values don't meet the specifications of the schema" in result.stderr
        ), bad


# -- the server side of the chart's flags --------------------------------------------------------------
def _serve_args(container: dict[str, Any]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve_arguments(parser)
    return parser.parse_args(container["args"][1:])


def test_plain_http_port_reaches_the_server_flags_and_the_metrics_service(render: Render) -> None:
    objects = render("default", *PLAIN, "metrics.plainHttp.port=9102", "metrics.nodeRatioSeriesLimit=300")
    container = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    parsed = _serve_args(container)
    assert (parsed.metrics_port, parsed.node_ratio_series_limit) == (9102, 300)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"https": 8443, "metrics": 9102}
    service = one(objects, "Service", METRICS_SERVICE)
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9102, "targetPort": "metrics", "protocol": "TCP"}
    ]
    # The webhook Service stays exactly what the apiserver calls.
    assert [p["name"] for p in one(objects, "Service", FULLNAME)["spec"]["ports"]] == ["https"]


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


@pytest.mark.parametrize("plain", [False, True])
def test_service_monitor_selects_only_the_metrics_service_and_a_port_it_has(
    render: Render, plain: bool
) -> None:
    objects = render(
        "default",
        *ALL_ON,
        *(PLAIN if plain else ()),
        "extender.service.enabled=true",
        "metrics.serviceMonitor.labels.release=kube-prometheus-stack",
    )
    monitor = one(objects, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    selector = monitor["spec"]["selector"]["matchLabels"]
    selected = [
        s["metadata"]["name"] for s in find(objects, "Service") if _selects(selector, s["metadata"]["labels"])
    ]
    assert selected == [METRICS_SERVICE]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    service_ports = {p["name"] for p in one(objects, "Service", METRICS_SERVICE)["spec"]["ports"]}
    assert endpoint["port"] in service_ports and endpoint["path"] == "/metrics"
    if plain:
        assert endpoint["scheme"] == "http" and "tlsConfig" not in endpoint
    else:
        assert endpoint["scheme"] == "https"
        assert endpoint["tlsConfig"] == {
            "ca": {"secret": {"name": f"{FULLNAME}-tls", "key": "ca.crt"}},
            "serverName": f"{FULLNAME}.{NAMESPACE}.svc",
        }
        # The Secret the Deployment mounts is the one whose CA the scrape trusts.
        volumes = one(objects, "Deployment")["spec"]["template"]["spec"]["volumes"]
        assert {"name": "tls", "secret": {"secretName": f"{FULLNAME}-tls", "defaultMode": 0o440}} in volumes


def test_service_monitor_in_provided_mode_needs_tls_settings_or_the_plain_port(helm: Helm) -> None:
    base = [
        "certs.mode=provided",
        "certs.provided.secretName=my-tls",
        "certs.provided.caBundle=Zm9v",
        "metrics.serviceMonitor.enabled=true",
    ]
    failed = helm.template(*base, check=False)
    assert failed.returncode != 0 and "metrics.serviceMonitor.tlsConfig is required" in failed.stderr
    assert helm.template(*base, *PLAIN).returncode == 0


def test_network_policy_opens_the_webhook_port_to_all_and_metrics_to_monitoring(render: Render) -> None:
    objects = render("default", *ALL_ON, *PLAIN, "networkPolicy.metricsNamespace=observability")
    policy = one(objects, "NetworkPolicy")
    deployment = one(objects, "Deployment")
    assert policy["spec"]["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    webhook_rule, metrics_rule = policy["spec"]["ingress"]
    container_ports = {
        p["name"]: p["containerPort"]
        for p in deployment["spec"]["template"]["spec"]["containers"][0]["ports"]
    }
    assert webhook_rule == {
        "ports": [{"port": container_ports["https"], "protocol": "TCP"}]
    }  # no `from`: anyone
    assert metrics_rule["ports"] == [{"port": container_ports["metrics"], "protocol": "TCP"}]
    assert metrics_rule["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "observability"}}}
    ]
    narrowed = one(
        render(
            "default", "networkPolicy.enabled=true", "networkPolicy.webhookFrom[0].ipBlock.cidr=172.18.0.0/16"
        ),
        "NetworkPolicy",
    )
    replicas = {"podSelector": {"matchLabels": deployment["spec"]["selector"]["matchLabels"]}}
    assert narrowed["spec"]["ingress"] == [
        {
            "ports": [{"port": 8443, "protocol": "TCP"}],
            # the apiserver's peers, and the replicas themselves (followers forward to the leader)
            "from": [{"ipBlock": {"cidr": "172.18.0.0/16"}}, replicas],
        }
    ]


# -- dashboard ----------------------------------------------------------------------------------------
def exposed_metric_names() -> set[str]:
    """Every sample name a real server's registry can expose (with the extender routes registered)."""
    from limitguard.cli.startup import build_services
    from limitguard.core.config import Config, LimitAwareConfig
    from limitguard.http.app import create_app
    from limitguard.kube.replica_metrics import ReplicaMetrics
    from limitguard.state.store import ClusterState
    from tests.support import node, pod

    state = ClusterState()
    state.replace_nodes([node("n1")])
    state.replace_namespaces([])
    state.replace_pods([pod("p1", node_name="n1", cpu="4")])
    services = build_services(Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 150})), state)
    create_app(services)  # registers the extender's metrics on the same registry
    ReplicaMetrics(services.metrics.registry)  # what a replica-set member adds (leader election)
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    names = set()
    for family in services.metrics.registry.collect():
        names |= {family.name + suffix for suffix in suffixes.get(family.type, ("",))}
    return names


def metric_names_in(expr: str) -> set[str]:
    """The limitguard metric names a PromQL expression reads (label values and strings ignored)."""
    without_strings = re.sub(r'"[^"]*"', '""', expr)
    return set(re.findall(r"\blimitguard_[a-zA-Z0-9_]*", without_strings))


@pytest.fixture(scope="module")
def exposed() -> set[str]:
    return exposed_metric_names()


def dashboard_queries(dashboard: dict[str, Any]) -> list[str]:
    queries = [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]
    queries += [
        v["query"]["query"] for v in dashboard["templating"]["list"] if isinstance(v.get("query"), dict)
    ]
    return queries


def test_dashboard_config_map_carries_the_json_file_with_the_sidecar_label(render: Render) -> None:
    objects = render(
        "default",
        "metrics.dashboard.enabled=true",
        "metrics.dashboard.namespace=monitoring",
        "metrics.dashboard.annotations.grafana_folder=Kubernetes",
    )
    config_map = one(objects, "ConfigMap", f"{FULLNAME}-dashboard")
    assert config_map["metadata"]["namespace"] == "monitoring"
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "Kubernetes"}
    shipped = json.loads(config_map["data"]["limitguard.json"])
    assert shipped == json.loads((CHART / "files" / "grafana-dashboard.json").read_text())


def test_dashboard_shows_oversubscription_decisions_and_latency_from_metrics_that_exist(
    exposed: set[str],
) -> None:
    dashboard = json.loads((CHART / "files" / "grafana-dashboard.json").read_text())
    assert dashboard["uid"] == "limitguard"
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
    used: set[str] = set()
    for query in dashboard_queries(dashboard):
        used |= metric_names_in(query)
    missing = used - exposed
    assert not missing, f"the dashboard queries metrics no server exposes: {sorted(missing)}"
    by_title = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in panels}
    ratio = by_title["Limit ratio per node and resource"]
    assert "limitguard_node_limit_ratio" in ratio and "by (node, resource)" in ratio
    assert "by (webhook, decision, reason)" in by_title["Admission decisions by reason"]
    assert "histogram_quantile" in by_title["Admission latency"]
    assert "limitguard_admission_duration_seconds_bucket" in by_title["Admission latency"]


def test_notes_name_the_image_and_where_to_read_how_to_provide_it(helm: Helm) -> None:
    args = [
        "install",
        "lg",
        str(CHART),
        "--namespace",
        NAMESPACE,
        "--dry-run=client",
        "--set",
        "image.repository=limitguard.local/limitguard",
        "--set",
        "image.tag=dev",
    ]
    notes = helm.run(*args).stdout.split("NOTES:", 1)[1]
    assert "Image:            limitguard.local/limitguard:dev" in notes and "docs/install.md" in notes
