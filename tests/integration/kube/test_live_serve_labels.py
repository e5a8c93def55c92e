"""The room labels as `limitguard serve` writes them: only the leader, through the apiserver's PATCH;
a new leader after a crash writes nothing that is already right; a binding the leader approves
lowers the label."""

from __future__ import annotations

import orjson

from limitguard.core.roomlabels import is_room_label
from tests.integration.kube.helpers import eventually
from tests.integration.kube.replicaset import HANG_GUARD, ReplicaSet, cluster
from tests.integration.kube.test_live_failover import advance_until

CPU = "limitguard.io/limit-room-cpu"


def room_labels(replicas: ReplicaSet) -> dict[str, str]:
    stored = orjson.loads(replicas.apiserver.objects["nodes"]["node1"].body)
    return {key: value for key, value in stored["metadata"]["labels"].items() if is_room_label(key)}


async def test_only_the_leader_labels_and_a_new_leader_rewrites_nothing(replicas: ReplicaSet) -> None:
    cluster(replicas.apiserver, "8", 3)  # 8 cpu x 125 %: 10,000 millicores of room
    await replicas.start(2)
    old = await replicas.elected()
    await eventually(lambda: room_labels(replicas) == {CPU: "10000"}, "node1 labelled", HANG_GUARD)
    assert [content for _, content, _ in replicas.apiserver.node_patches] == ["application/merge-patch+json"]
    assert (await replicas.bind(old, "p-000"))["allowed"]  # 1 cpu held, then bound
    await replicas.clock.advance(1.0)  # the leader's next looks
    await eventually(lambda: room_labels(replicas) == {CPU: "9000"}, "node1 lowered", HANG_GUARD)
    written = len(replicas.apiserver.node_patches)
    await replicas.all_seen()
    await replicas.kill(old)
    await advance_until(replicas, lambda: len(replicas.leaders()) == 1, "a new leader")
    new = await replicas.elected()
    assert new is not old
    await replicas.clock.advance(2.0)  # ten looks of the new leader
    assert len(replicas.apiserver.node_patches) == written  # it found every label right
    assert (await replicas.bind(new, "p-001"))["allowed"]
    await replicas.clock.advance(1.0)
    await eventually(lambda: room_labels(replicas) == {CPU: "8000"}, "node1 lowered again", HANG_GUARD)
