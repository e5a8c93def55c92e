"""Node GET and PATCH on the fake apiserver, as kube-apiserver answers them: the three patch types,
the resourceVersion precondition, validation, and the watch event every write makes."""

from __future__ import annotations

import pytest

from limitguard.kube.client import ApiError
from limitguard.kube.nodeapi import MERGE_PATCH, STRATEGIC_MERGE_PATCH, NodeApi
from limitguard.testing.builders import node
from limitguard.testing.fakeapi.patches import JSON_PATCH
from tests.integration.kube.helpers import eventually

OTHER = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def tainted_node() -> dict:
    built = node("node1", taints=[OTHER])
    built["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return built


async def api(apiserver, connect) -> tuple[NodeApi, object]:
    apiserver.apply("nodes", tainted_node())
    live = await connect()
    return NodeApi(live.feed.client), live


async def test_a_merge_patch_sets_and_removes_labels_and_the_watch_shows_it(apiserver, connect):
    nodes, live = await api(apiserver, connect)
    before = await nodes.get("node1")
    answer = await nodes.patch(
        "node1", {"metadata": {"labels": {"a": "1", "kubernetes.io/hostname": None}}}, MERGE_PATCH
    )
    assert answer["metadata"]["labels"] == {"a": "1"}
    assert int(answer["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    assert answer["spec"]["taints"] == [OTHER]  # nothing else touched
    await eventually(
        lambda: dict(live.state.node("node1").traits.labels) == {"a": "1"}, "the watch shows the labels"
    )
    assert (await nodes.get("node1", from_cache=True))["metadata"]["labels"] == {"a": "1"}


async def test_a_strategic_merge_patch_replaces_the_taints_whole_and_merges_conditions_by_type(
    apiserver, connect
):
    nodes, _ = await api(apiserver, connect)
    ours = {"key": "limitguard.io/limit-full", "effect": "PreferNoSchedule"}
    patch = {"spec": {"taints": [ours]}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    answer = await nodes.patch("node1", patch, STRATEGIC_MERGE_PATCH)
    assert answer["spec"]["taints"] == [ours]  # no merge key: the list is replaced
    assert answer["status"]["conditions"] == [
        {"type": "Ready", "status": "True"}
    ]  # status never changes here


async def test_a_stale_resource_version_is_a_conflict_and_changes_nothing(apiserver, connect):
    nodes, _ = await api(apiserver, connect)
    version = (await nodes.get("node1"))["metadata"]["resourceVersion"]
    await nodes.patch("node1", {"metadata": {"labels": {"b": "2"}}}, MERGE_PATCH)  # another writer
    with pytest.raises(ApiError) as refused:
        await nodes.patch(
            "node1", {"metadata": {"resourceVersion": version}, "spec": {"taints": []}}, STRATEGIC_MERGE_PATCH
        )
    assert refused.value.status == 409 and "the object has been modified" in refused.value.message
    assert (await nodes.get("node1"))["spec"]["taints"] == [OTHER]
    current = (await nodes.get("node1"))["metadata"]["resourceVersion"]
    answer = await nodes.patch(
        "node1", {"metadata": {"resourceVersion": current}, "spec": {"taints": []}}, STRATEGIC_MERGE_PATCH
    )
    assert "taints" not in answer["spec"] or answer["spec"]["taints"] == []


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        ({"metadata": {"labels": {"bad key!": "x"}}}, MERGE_PATCH, 422),
        ({"metadata": {"labels": {"a": "-1-"}}}, MERGE_PATCH, 422),
        ({"spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}}, STRATEGIC_MERGE_PATCH, 422),
        ({"spec": {"taints": [OTHER, OTHER]}}, STRATEGIC_MERGE_PATCH, 422),  # unique by key and effect
        ({"metadata": {"name": "node2"}}, MERGE_PATCH, 400),
        ({"$retainKeys": ["a"]}, STRATEGIC_MERGE_PATCH, 400),
        ([{"op": "test", "path": "/metadata/labels/absent", "value": "x"}], JSON_PATCH, 422),
        ({"metadata": {}}, "application/apply-patch+yaml", 415),
    ],
)
async def test_refused_patches_answer_as_the_apiserver_does_and_change_nothing(
    apiserver, connect, body, content_type, status
):
    nodes, _ = await api(apiserver, connect)
    before = await nodes.get("node1")
    with pytest.raises(ApiError) as refused:
        await nodes.client.send_json("PATCH", "/api/v1/nodes/node1", body, nodes.timeout, content_type)
    assert refused.value.status == status
    assert await nodes.get("node1") == before


async def test_a_json_patch_applies_and_a_missing_node_is_404(apiserver, connect):
    nodes, _ = await api(apiserver, connect)
    ops = [{"op": "add", "path": "/metadata/labels/c", "value": "3"}]
    answer = await nodes.client.send_json("PATCH", "/api/v1/nodes/node1", ops, nodes.timeout, JSON_PATCH)
    assert answer["metadata"]["labels"]["c"] == "3"
    assert await nodes.get("ghost") is None
    with pytest.raises(ApiError) as refused:
        await nodes.patch("ghost", {"metadata": {"labels": {"a": "1"}}}, MERGE_PATCH)
    assert refused.value.status == 404
    assert [name for name, _, _ in apiserver.node_patches] == ["node1"]
