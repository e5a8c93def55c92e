"""The chart's policy reports and events: off by default, RBAC only for what is enabled and only where
it is needed, the OpenReports CRDs kept on uninstall, and an uninstall hook that deletes the reports."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from limitguard.core.config import ReportsApi
from tests.e2e.chart.conftest import FULLNAME, NAMESPACE, find, one
from tests.e2e.chart.rendered import WRITE_VERBS, Render, _config
from tests.support import REPO

CRDS = REPO / "tests" / "fixtures" / "policyreports"


def _findings_rbac(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = (f"{FULLNAME}-reports", f"{FULLNAME}-findings", f"{FULLNAME}-reports-cleanup")
    return [
        o for o in objects if o["kind"].endswith(("Role", "RoleBinding")) and o["metadata"]["name"] in names
    ]


def test_off_by_default_nothing_is_granted_installed_or_written(render: Render) -> None:
    objects = render()
    assert _findings_rbac(objects) == []
    assert find(objects, "CustomResourceDefinition") == []
    assert find(objects, "Job", f"{FULLNAME}-reports-cleanup") == []
    config = _config(objects)
    assert (config.reports.enabled, config.events.enabled) == (False, False)


def test_enabled_reports_and_events_reach_the_server_with_rights_only_where_needed(render: Render) -> None:
    objects = render(
        "default",
        "reports.enabled=true",
        "events.enabled=true",
        "reports.podReports.max=50",
        "reports.schedulerConfigNamespaces={koordinator-system}",
    )
    config = _config(objects)
    assert config.reports.enabled and config.events.enabled and config.reports.max_pod_reports == 50
    assert config.reports.api is ReportsApi.OPENREPORTS
    assert config.reports.scheduler_config_namespaces == ("koordinator-system",)

    reports = one(objects, "ClusterRole", f"{FULLNAME}-reports")
    assert reports["rules"] == [
        {
            "apiGroups": ["openreports.io"],
            "resources": ["reports", "clusterreports"],
            "verbs": ["get", "list", "create", "update", "delete"],
        }
    ]
    roles = {
        role["metadata"]["namespace"]: role["rules"] for role in find(objects, "Role", f"{FULLNAME}-findings")
    }
    events = {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}
    configmaps = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}
    assert roles == {"default": [events], "koordinator-system": [configmaps, events]}
    for role in find(objects, "Role", f"{FULLNAME}-findings"):
        for rule in role["rules"]:
            assert rule["resources"] == ["configmaps"] or set(rule["verbs"]) & WRITE_VERBS <= {
                "create",
                "patch",
            }
    for binding in find(objects, "RoleBinding", f"{FULLNAME}-findings"):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}]


def test_events_alone_need_no_report_rights(render: Render) -> None:
    objects = render("default", "events.enabled=true")
    assert find(objects, "ClusterRole", f"{FULLNAME}-reports") == []
    assert [r["metadata"]["namespace"] for r in find(objects, "Role", f"{FULLNAME}-findings")] == ["default"]


def test_the_second_schedulers_namespace_is_read_for_its_configmap(render: Render) -> None:
    # without a cluster the second scheduler's image needs the release named
    objects = render(
        "default", "reports.enabled=true", "scheduler.enabled=true", "config.kubernetesVersion=1.35"
    )
    assert _config(objects).reports.scheduler_config_namespaces == (NAMESPACE,)
    assert [r["metadata"]["namespace"] for r in find(objects, "Role", f"{FULLNAME}-findings")] == [NAMESPACE]


def test_wgpolicyk8s_rights_follow_the_api(render: Render) -> None:
    objects = render("default", "reports.enabled=true", "reports.api=wgpolicyk8s")
    (rule,) = one(objects, "ClusterRole", f"{FULLNAME}-reports")["rules"]
    assert (rule["apiGroups"], rule["resources"]) == (
        ["wgpolicyk8s.io"],
        ["policyreports", "clusterpolicyreports"],
    )
    assert _config(objects).reports.api is ReportsApi.WGPOLICYK8S


def test_the_openreports_crds_are_upstreams_and_kept_on_uninstall(render: Render) -> None:
    crds = {
        crd["metadata"]["name"]: crd
        for crd in find(render("default", "reports.installCRDs=true"), "CustomResourceDefinition")
    }
    assert set(crds) == {"reports.openreports.io", "clusterreports.openreports.io"}
    for name, file in (
        ("reports.openreports.io", "openreports.io_reports.v0.2.1.yaml"),
        ("clusterreports.openreports.io", "openreports.io_clusterreports.v0.2.1.yaml"),
    ):
        upstream = yaml.safe_load((CRDS / file).read_text())
        assert crds[name]["metadata"]["annotations"].pop("helm.sh/resource-policy") == "keep"
        assert crds[name] == upstream


def test_uninstall_deletes_the_reports_with_a_hook_that_may_only_list_and_delete_them(render: Render) -> None:
    objects = render("default", "reports.enabled=true")
    job = one(objects, "Job", f"{FULLNAME}-reports-cleanup")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-delete"
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "reports",
        "delete",
        "--api=openreports",
    ]
    (rule,) = one(objects, "ClusterRole", f"{FULLNAME}-reports-cleanup")["rules"]
    assert rule["verbs"] == ["list", "delete"]
    for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding"):
        assert (
            one(objects, kind, f"{FULLNAME}-reports-cleanup")["metadata"]["annotations"]["helm.sh/hook"]
            == "pre-delete"
        )


@pytest.mark.parametrize(
    "setting",
    [
        "reports.api=policyreports",
        "reports.podReports.max=-1",
        "reports.schedulerConfigNamespaces={Bad_Name}",
    ],
)
def test_the_values_schema_refuses_wrong_report_values(helm: Any, setting: str) -> None:
    result = helm.template(setting, check=False)
    assert result.returncode != 0 and "schema" in result.stderr.lower(), setting


def test_chart_defaults_are_the_servers() -> None:
    values = yaml.safe_load((REPO / "charts" / "limitguard" / "values.yaml").read_text())
    schema = json.loads(
        (REPO / "webhook" / "limitguard" / "schemas" / "limitguard-config.schema.json").read_text()
    )
    reports = schema["properties"]["reports"]["properties"]
    assert values["reports"]["enabled"] is reports["enabled"]["default"] is False
    assert values["reports"]["api"] == reports["api"]["default"]
    pods = reports["podReports"]["properties"]
    assert values["reports"]["podReports"] == {key: pods[key]["default"] for key in ("enabled", "max")}
    assert values["events"]["enabled"] is schema["properties"]["events"]["properties"]["enabled"]["default"]
