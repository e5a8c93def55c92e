"""The chart's defaults for a webhook on the apiserver's request path: unthrottled, prioritised,
short timeouts, one-year certificates.

Facts checked against Gatekeeper's chart (open-policy-agent/gatekeeper charts/gatekeeper:
templates/gatekeeper-critical-pods-resourcequota.yaml, a ResourceQuota whose scopeSelector is
`PriorityClass In [<the pods' class>]`; values.yaml, validatingWebhookTimeoutSeconds 3,
mutatingWebhookTimeoutSeconds 1, priorityClassName system-cluster-critical).
"""

from __future__ import annotations

import pytest
import yaml

from tests.e2e.chart.conftest import CHART, FULLNAME, MODES, NAMESPACE, RELEASE, Helm, find, one
from tests.e2e.chart.rendered import Render, _config, server_container, webhooks

CRITICAL = "system-cluster-critical"
FORWARDED = ("pods.limitguard.io", "bindings.limitguard.io", "resize.limitguard.io")


def test_the_server_has_a_cpu_request_and_no_cpu_limit(render: Render) -> None:
    """CFS throttling of a CPU limit would delay every pod creation and binding waiting on it."""
    resources = server_container(render())["resources"]
    assert resources["requests"]["cpu"] and resources["requests"]["memory"]
    assert "cpu" not in resources["limits"]
    assert resources["limits"]["memory"]  # a bounded cache: the memory limit stays


@pytest.mark.parametrize("mode", sorted(MODES))
def test_server_pods_are_system_cluster_critical_with_a_matching_quota(render: Render, mode: str) -> None:
    objects = render(mode)
    pod = one(objects, "Deployment", FULLNAME)["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == CRITICAL
    quota = one(objects, "ResourceQuota")
    assert quota["metadata"]["namespace"] == NAMESPACE
    assert quota["spec"]["scopeSelector"] == {
        "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": [CRITICAL]}]
    }
    replicas = one(objects, "Deployment", FULLNAME)["spec"]["replicas"]
    assert int(quota["spec"]["hard"]["pods"]) >= replicas + 1  # the rollout's surge pod fits
    # Hook Jobs run before the quota exists: they take no critical class a cluster could refuse.
    for job in find(objects, "Job"):
        assert "priorityClassName" not in job["spec"]["template"]["spec"], job["metadata"]["name"]


def test_the_quota_follows_the_class_and_its_switch(render: Render) -> None:
    custom = render("default", "priorityClassName=platform-high")
    (expression,) = one(custom, "ResourceQuota")["spec"]["scopeSelector"]["matchExpressions"]
    assert expression["values"] == ["platform-high"]
    assert not find(render("default", "priorityClassQuota.enabled=false"), "ResourceQuota")
    none = render("default", "priorityClassName=")
    assert not find(none, "ResourceQuota")
    assert "priorityClassName" not in one(none, "Deployment")["spec"]["template"]["spec"]


def test_no_quota_in_kube_system_where_it_would_cap_the_control_planes_critical_pods(helm: Helm) -> None:
    output = helm.run("template", RELEASE, str(CHART), "--namespace", "kube-system").stdout
    kinds = [doc["kind"] for doc in yaml.safe_load_all(output) if doc]
    assert "Deployment" in kinds and "ResourceQuota" not in kinds


def test_a_quota_too_small_for_a_rollout_is_refused_at_render_time(helm: Helm) -> None:
    result = helm.template("replicaCount=3", "priorityClassQuota.pods=3", check=False)
    assert result.returncode != 0
    assert "priorityClassQuota.pods (3) must be at least replicaCount + 1 (4)" in result.stderr
    assert helm.template("replicaCount=3", "priorityClassQuota.pods=4").returncode == 0


def test_timeouts_are_gatekeepers_but_for_scheduler_configmaps(render: Render) -> None:
    timeouts = {name: hook["timeoutSeconds"] for name, hook in webhooks(render()).items()}
    assert timeouts == {
        "defaults.limitguard.io": 1,
        "placement.limitguard.io": 1,
        "pods.limitguard.io": 3,
        "bindings.limitguard.io": 3,
        "resize.limitguard.io": 3,
        "nodes.limitguard.io": 3,
        "configmaps.limitguard.io": 10,
    }


def test_the_forward_timeout_stays_below_every_forwarded_webhooks_timeout(render: Render, helm: Helm) -> None:
    objects = render()
    forward = _config(objects).replicas.forward_timeout_seconds
    hooks = webhooks(objects)
    assert all(forward < hooks[name]["timeoutSeconds"] for name in FORWARDED)
    result = helm.template("webhooks.resize.timeoutSeconds=2", check=False)
    assert result.returncode != 0
    assert (
        "config.replicas.forwardTimeoutSeconds (2) must be below webhooks.resize.timeoutSeconds (2)"
        in result.stderr
    )
    # A webhook switched off forwards nothing, so its timeout does not matter.
    assert helm.template("webhooks.resize.enabled=false", "webhooks.resize.timeoutSeconds=1").returncode == 0


def test_generated_certificates_are_valid_one_year(render: Render) -> None:
    jobs = [job for job in find(render("generate"), "Job") if "-certs-" in job["metadata"]["name"]]
    assert len(jobs) == 2
    for job in jobs:
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--days=365" in args, job["metadata"]["name"]


def test_namespace_enforcement_reaches_the_server_and_bad_actions_are_refused(
    render: Render, helm: Helm
) -> None:
    config = _config(render("default", "config.limitAware.namespaceEnforcement.team-a=Warn"))
    assert config.limit_aware.namespace_enforcement == {"team-a": "Warn"}
    assert _config(render()).limit_aware.namespace_enforcement == {}
    refused = helm.template("config.limitAware.namespaceEnforcement.team-a=Block", check=False)
    assert refused.returncode != 0 and "namespaceEnforcement/team-a" in refused.stderr


def test_install_notes_list_the_namespaces_with_their_own_enforcement(helm: Helm) -> None:
    args = ["install", "lg", str(CHART), "--namespace", NAMESPACE, "--dry-run=client"]
    plain = helm.run(*args).stdout.split("NOTES:", 1)[1]
    assert "namespaces with their own" not in plain
    overridden = helm.run(
        *args,
        "--set",
        "config.limitAware.namespaceEnforcement.team-a=Deny",
        "--set",
        "config.limitAware.namespaceEnforcement.legacy=DryRun",
    ).stdout.split("NOTES:", 1)[1]
    assert "(namespaces with their own: legacy=DryRun team-a=Deny)" in overridden
    warned = helm.run(
        *args,
        "--set",
        "config.limitAware.enforcement=Warn",
        "--set",
        "config.limitAware.namespaceEnforcement.team-a=Deny",
    ).stdout
    assert "enforcement is Warn: outside the namespaces listed in namespaceEnforcement" in warned
