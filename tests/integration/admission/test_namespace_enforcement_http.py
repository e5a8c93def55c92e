"""limitAware.namespaceEnforcement: each listed namespace has its own action, the others follow
`enforcement`; admission and the extender's filter agree (a rollout moves namespaces to Deny one at
a time, docs/rollout.md). Over limitguard's real TLS server, on the worked example (node1 full)."""

from __future__ import annotations

import dataclasses

import pytest

from limitguard.cli.configfile import parse_config
from limitguard.core.config import ConfigError, Enforcement, UnboundPolicy
from limitguard.testing.examples import config, worked_example
from tests.integration.extender.shapes import args_names, scheduler_pod
from tests.support import pod, pod_create

OVERRIDES = {"team-warn": Enforcement.WARN, "team-dry": Enforcement.DRY_RUN, "team-deny": Enforcement.DENY}


def on_full_node(namespace: str) -> dict:
    """A pod created straight onto node1 (10 of 10 cpu used): over its ratio in any namespace."""
    return pod_create(pod("direct", namespace=namespace, node_name="node1", cpu="4"))


@pytest.mark.parametrize(
    ("enforcement", "namespace", "allowed", "action"),
    [
        (Enforcement.DRY_RUN, "default", True, "dryrun"),  # not listed: the cluster-wide action
        (Enforcement.DRY_RUN, "team-deny", False, "deny"),
        (Enforcement.DRY_RUN, "team-warn", True, "warn"),
        (Enforcement.DENY, "default", False, "deny"),
        (Enforcement.DENY, "team-dry", True, "dryrun"),
        (Enforcement.DENY, "team-warn", True, "warn"),
    ],
)
async def test_a_listed_namespace_uses_its_own_action(start_server, enforcement, namespace, allowed, action):
    server = await start_server(
        worked_example(), config(enforcement=enforcement, namespace_enforcement=OVERRIDES)
    )
    status, answer = await server.post("/validate", on_full_node(namespace))
    response = answer["response"]
    assert status == 200 and response["allowed"] is allowed
    if action == "warn":
        assert response["warnings"] and "node1" in response["warnings"][0]
    if action == "dryrun":
        assert "warnings" not in response
    if action == "deny":
        assert "cpu limit 4 exceeds remaining 0" in response["status"]["message"]


async def test_unbound_pods_follow_their_namespace_too(start_server):
    """unboundPods Deny is subject to the namespace's action, as to the cluster-wide one."""
    configured = config(
        enforcement=Enforcement.DENY, unbound_pods=UnboundPolicy.DENY, namespace_enforcement=OVERRIDES
    )
    server = await start_server(worked_example(), configured)
    big = {"default": None, "team-warn": None}
    for namespace in big:
        _, answer = await server.post("/validate", pod_create(pod("big", namespace=namespace, cpu="6")))
        big[namespace] = answer["response"]
    assert big["default"]["allowed"] is False
    assert big["team-warn"]["allowed"] is True and big["team-warn"]["warnings"]


async def test_the_extender_filters_only_where_the_namespace_denies(start_server):
    server = await start_server(
        worked_example(),
        config(enforcement=Enforcement.WARN, namespace_enforcement={"team-deny": Enforcement.DENY}),
    )
    _, warned = await server.post(
        "/extender/filter", args_names(scheduler_pod(namespace="default"), ["node1", "node2"])
    )
    assert warned["nodenames"] == ["node1", "node2"]  # Warn admits, so the filter passes every node
    _, denied = await server.post(
        "/extender/filter", args_names(scheduler_pod(namespace="team-deny"), ["node1", "node2"])
    )
    assert denied["nodenames"] == ["node2"] and set(denied["failedNodes"]) == {"node1"}


def test_the_configuration_file_key_and_its_errors():
    base = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    parsed = parse_config({**base, "limitAware": {"namespaceEnforcement": {"team-a": "Warn"}}})
    assert parsed.limit_aware.namespace_enforcement == {"team-a": Enforcement.WARN}
    (team_a,) = parsed.limit_aware.per_namespace().values()
    assert team_a == dataclasses.replace(
        parsed.limit_aware, enforcement=Enforcement.WARN, namespace_enforcement={}
    )
    with pytest.raises(ConfigError) as error:
        parse_config(
            {**base, "limitAware": {"namespaceEnforcement": {"team-a": "Block", "Bad_Name": "Deny"}}}
        )
    problems = " ".join(error.value.problems)
    assert "namespaceEnforcement" in problems and "Block" in problems and "Bad_Name" in problems


async def test_dry_run_shows_nothing_even_for_a_pod_that_fits_nowhere(start_server):
    """unboundPods Warn warns under Deny and Warn; under DryRun the finding is only logged and
    counted, as DryRun promises (and in a namespace whose own action is DryRun likewise)."""
    big = pod_create(pod("big", cpu="6"))
    for enforcement, warns in (
        (Enforcement.DENY, True),
        (Enforcement.WARN, True),
        (Enforcement.DRY_RUN, False),
    ):
        server = await start_server(worked_example(), config(enforcement=enforcement))
        _, answer = await server.post("/validate", big)
        assert answer["response"]["allowed"] is True, enforcement
        assert ("warnings" in answer["response"]) is warns, enforcement
    server = await start_server(
        worked_example(),
        config(enforcement=Enforcement.DENY, namespace_enforcement={"default": Enforcement.DRY_RUN}),
    )
    _, answer = await server.post("/validate", big)
    assert answer["response"]["allowed"] is True and "warnings" not in answer["response"]
