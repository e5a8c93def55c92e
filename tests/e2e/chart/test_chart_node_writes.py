"""The chart's rights for the room labels and taint: patch on nodes and the ValidatingAdmissionPolicy
only when placement hints are not Never, the policy's CEL evaluated (cel-python) on allowed and
forbidden node changes, and the cleanup hook with its own RBAC."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.e2e.chart.conftest import FULLNAME, NAMESPACE, find, one
from tests.e2e.chart.rendered import Render

SERVER = f"system:serviceaccount:{NAMESPACE}:{FULLNAME}"
ROOM = "limitguard.io/limit-room-cpu"
FULL = {"key": "limitguard.io/limit-full", "effect": "PreferNoSchedule"}
OTHER = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def server_rules(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return one(objects, "ClusterRole", FULLNAME)["rules"]


@pytest.mark.parametrize(("mode", "writes"), [("Auto", True), ("Always", True), ("Never", False)])
def test_patch_on_nodes_and_the_policy_only_unless_never(render: Render, mode: str, writes: bool) -> None:
    objects = render("default", f"config.placementHints.mode={mode}")
    patch = {"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]}
    assert (patch in server_rules(objects)) is writes
    assert bool(find(objects, "ValidatingAdmissionPolicy")) is writes
    assert bool(find(objects, "ValidatingAdmissionPolicyBinding")) is writes
    jobs = {
        job["metadata"]["name"]: job["metadata"]["annotations"]["helm.sh/hook"]
        for job in find(objects, "Job")
    }
    assert jobs[f"{FULLNAME}-cleanup-uninstall"] == "post-delete"
    # Never: what an earlier mode wrote is removed on install and upgrade, by the hook, at once
    assert jobs.get(f"{FULLNAME}-cleanup-now") == (None if writes else "post-install,post-upgrade")


def test_no_rbac_renders_no_policy_and_no_hook(render: Render) -> None:
    objects = render("default", "rbac.create=false")
    assert not find(objects, "ValidatingAdmissionPolicy")
    assert not [job for job in find(objects, "Job") if "cleanup" in job["metadata"]["name"]]


def test_the_binding_denies_and_the_policy_matches_node_updates_of_the_server_only(render: Render) -> None:
    objects = render()
    policy = one(objects, "ValidatingAdmissionPolicy", f"{FULLNAME}-node-writes")
    binding = one(objects, "ValidatingAdmissionPolicyBinding", f"{FULLNAME}-node-writes")
    assert binding["spec"] == {"policyName": f"{FULLNAME}-node-writes", "validationActions": ["Deny"]}
    assert policy["spec"]["failurePolicy"] == "Fail"
    (rule,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert (rule["resources"], rule["operations"], rule["apiGroups"]) == (["nodes"], ["UPDATE"], [""])
    (condition,) = policy["spec"]["matchConditions"]
    assert cel(condition["expression"], {"request": {"userInfo": {"username": SERVER}}}) is True
    for other in ("system:node:node-1", f"system:serviceaccount:{NAMESPACE}:someone", "admin"):
        assert cel(condition["expression"], {"request": {"userInfo": {"username": other}}}) is False


def test_the_cleanup_hooks_rbac_is_its_own_and_only_what_it_needs(render: Render) -> None:
    objects = render()
    role = one(objects, "ClusterRole", f"{FULLNAME}-cleanup")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]}]
    lease = one(objects, "Role", f"{FULLNAME}-cleanup")
    assert lease["rules"] == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [FULLNAME],
            "verbs": ["get", "delete"],
        }
    ]
    job = one(objects, "Job", f"{FULLNAME}-cleanup-uninstall")
    spec = job["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == f"{FULLNAME}-cleanup"
    assert spec["containers"][0]["args"] == [
        "cleanup-nodes",
        f"--lease-name={FULLNAME}",
        f"--lease-namespace={NAMESPACE}",
        "--wait-seconds=120",
        "--max-per-second=5",
        "--burst=10",
    ]
    for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        annotations = one(objects, kind, f"{FULLNAME}-cleanup")["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == "post-delete"
        assert int(annotations["helm.sh/hook-weight"]) < int(
            job["metadata"]["annotations"]["helm.sh/hook-weight"]
        )
        assert "hook-succeeded" in annotations["helm.sh/hook-delete-policy"]
    import argparse

    from limitguard.cli import cleanup as cleanup_command

    parser = argparse.ArgumentParser()
    cleanup_command.add_arguments(parser)
    parser.parse_args(spec["containers"][0]["args"][1:])  # the Job's flags exist in the real CLI


# -- the policy's CEL, evaluated ------------------------------------------------------------------
def cel(expression: str, activation: dict[str, Any]) -> Any:
    celpy = pytest.importorskip("celpy", reason="cel-python evaluates the policy's expressions")
    environment = celpy.Environment()
    program = environment.program(environment.compile(expression))
    result = program.evaluate({key: celpy.json_to_cel(value) for key, value in activation.items()})
    return bool(result) if isinstance(result, celpy.celtypes.BoolType) else result


def admitted(policy: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The messages of the validations *new* fails, as the apiserver evaluates the policy: the
    variables first (composited, lazily there: eagerly here), then every validation."""
    spec = policy["spec"]
    activation: dict[str, Any] = {
        "object": new,
        "oldObject": old,
        "request": {"userInfo": {"username": SERVER}},
    }
    variables = {}
    for variable in spec["variables"]:
        variables[variable["name"]] = cel_json(variable["expression"], {**activation, "variables": variables})
    return [
        validation["message"]
        for validation in spec["validations"]
        if cel(validation["expression"], {**activation, "variables": variables}) is not True
    ]


def cel_json(expression: str, activation: dict[str, Any]) -> Any:
    """A variable's value as plain JSON (the next expressions read it back)."""
    value = cel(expression, activation)
    return [str(item) if not isinstance(item, dict) else _plain(item) for item in value]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return str(value)


def a_node(
    labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "node-1",
            "uid": "u1",
            "resourceVersion": "41",
            "labels": {"kubernetes.io/hostname": "node-1", "zone": "a", **(labels or {})},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"podCIDR": "10.0.0.0/24", "providerID": "kind://x"},
    }
    if taints is not None:
        node["spec"]["taints"] = taints
    return node


def changed(node: dict[str, Any], edit) -> dict[str, Any]:
    new = copy.deepcopy(node)
    edit(new)
    new["metadata"]["resourceVersion"] = "42"
    new["metadata"]["managedFields"] = [{"manager": "limitguard"}]
    return new


OLD = a_node({ROOM: "1000"}, [OTHER])


@pytest.mark.parametrize(
    "edit",
    [
        lambda n: n["metadata"]["labels"].update({ROOM: "900"}),  # lowered
        lambda n: n["metadata"]["labels"].update({"limitguard.io/limit-room-memory": "37273"}),  # added
        lambda n: n["metadata"]["labels"].pop(ROOM),  # removed
        lambda n: n["metadata"]["labels"].update({ROOM: str(2**63 - 1)}),  # a node that does not check it
        lambda n: n["spec"]["taints"].append(dict(FULL)),  # its taint added, the other kept
        lambda n: n["spec"].update({"taints": [OTHER, FULL]}) or n["metadata"]["labels"].update({ROOM: "0"}),
        lambda n: None,  # nothing but resourceVersion and managedFields
    ],
)
def test_the_policy_allows_the_servers_own_labels_and_taint(render: Render, edit) -> None:
    policy = one(render(), "ValidatingAdmissionPolicy")
    assert admitted(policy, OLD, changed(OLD, edit)) == []


def test_the_policy_allows_removing_its_taint(render: Render) -> None:
    policy = one(render(), "ValidatingAdmissionPolicy")
    tainted = a_node({ROOM: "0"}, [OTHER, FULL])
    assert admitted(policy, tainted, changed(tainted, lambda n: n["spec"].update({"taints": [OTHER]}))) == []
    bare = a_node({ROOM: "0"}, [FULL])
    assert admitted(policy, bare, changed(bare, lambda n: n["spec"].pop("taints"))) == []


@pytest.mark.parametrize(
    ("edit", "refused"),
    [
        (lambda n: n["metadata"]["labels"].update({"zone": "b"}), "no label but its own"),
        (lambda n: n["metadata"]["labels"].update({"node-role.kubernetes.io/control-plane": ""}), "no label"),
        (lambda n: n["metadata"]["labels"].pop("zone"), "no label but its own"),
        (lambda n: n["metadata"]["labels"].update({ROOM: "-5"}), "decimal number"),
        (lambda n: n["metadata"]["labels"].update({"limitguard.io/limit-room-x": "lots"}), "decimal number"),
        (lambda n: n["metadata"]["annotations"].update({"a": "b"}), "metadata"),
        (lambda n: n["metadata"].update({"finalizers": ["x"]}), "metadata"),
        (lambda n: n["spec"].update({"unschedulable": True}), "spec"),
        (lambda n: n["spec"].update({"podCIDR": "10.9.0.0/24"}), "spec"),
        (lambda n: n["spec"].update({"taints": []}), "spec"),  # another's taint removed
        (lambda n: n["spec"]["taints"].append({"key": "x", "effect": "NoExecute"}), "spec"),
        (lambda n: n["spec"]["taints"].append({**FULL, "effect": "NoSchedule"}), "PreferNoSchedule"),
        (lambda n: n["spec"]["taints"].append({**FULL, "value": "yes"}), "PreferNoSchedule"),
    ],
)
def test_the_policy_forbids_everything_else(render: Render, edit, refused: str) -> None:
    policy = one(render(), "ValidatingAdmissionPolicy")
    messages = admitted(policy, OLD, changed(OLD, edit))
    assert messages and any(refused in message for message in messages), messages


def test_a_node_without_labels_or_taints_can_get_ours(render: Render) -> None:
    policy = one(render(), "ValidatingAdmissionPolicy")
    bare = a_node()
    del bare["metadata"]["labels"]
    new = changed(
        bare, lambda n: n["metadata"].update({"labels": {ROOM: "5"}}) or n["spec"].update({"taints": [FULL]})
    )
    assert admitted(policy, bare, new) == []
    assert admitted(policy, bare, changed(bare, lambda n: n["metadata"].update({"labels": {"x": "1"}})))


@pytest.mark.parametrize(
    ("settings", "expected", "absent"),
    [
        (
            (),
            "once some namespace's enforcement is Deny and a ratio applies",
            "taint limitguard.io/limit-full:",
        ),
        (("config.placementHints.mode=Always",), "from the start", "(with the default values: nothing)"),
        (
            ("config.placementHints.avoidFullNodes.enabled=true",),
            "less than 10% of a resource's limit capacity left get the taint limitguard.io/limit-full:PreferNoSchedule",
            "writes nothing to nodes",
        ),
        (
            ("config.placementHints.mode=Never",),
            "limitguard writes nothing to nodes and has no right to",
            "kubectl get nodes",
        ),
    ],
)
def test_install_notes_say_what_is_written_to_nodes_and_when(
    helm, settings: tuple[str, ...], expected: str, absent: str
) -> None:
    from tests.e2e.chart.conftest import CHART

    args = ["install", "lg", str(CHART), "--namespace", NAMESPACE, "--dry-run=client"]
    for item in settings:
        args += ["--set", item]
    notes = " ".join(helm.run(*args).stdout.split("NOTES:", 1)[1].split())
    assert expected in notes and absent not in notes
    if "Never" not in " ".join(settings):
        assert "kubectl get nodes -L limitguard.io/limit-room-cpu,limitguard.io/limit-room-memory" in notes
