"""`limitguard cleanup-nodes` (the chart's uninstall hook) against the fake apiserver: every
limit-room label and limit-full taint goes, everything else on the nodes stays, the Lease goes
once nobody holds it."""

from __future__ import annotations

import orjson

from limitguard.cli.main import main
from limitguard.core.roomlabels import FULL_TAINT
from limitguard.kube.cleanup import wait_until_released
from limitguard.kube.client import KubeClient, load_configuration
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.testing.builders import node
from limitguard.testing.clock import FakeClock
from tests.integration.kube.helpers import write_kubeconfig

OTHER = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
ROOM = {"limitguard.io/limit-room-cpu": "1000", "limitguard.io/limit-room-memory": "5"}


def lease(holder: str, duration: int = 15) -> dict:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "limitguard", "namespace": "guard"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration},
    }


def stored(apiserver, name: str) -> dict:
    return orjson.loads(apiserver.objects["nodes"][name].body)


async def test_cleanup_removes_only_limitguards_labels_and_taint_and_then_the_lease(apiserver, tmp_path):
    apiserver.apply("nodes", node("both", labels={**ROOM, "team": "a"}, taints=[OTHER, FULL_TAINT]))
    apiserver.apply("nodes", node("labels", labels=ROOM))
    apiserver.apply("nodes", node("taint", taints=[FULL_TAINT]))
    apiserver.apply("nodes", node("clean", labels={"team": "b"}, taints=[OTHER]))
    apiserver.apply("leases", lease(""))  # released by the last leader on its way out
    kubeconfig = write_kubeconfig(tmp_path, await apiserver.start())
    code = await _run(
        [
            "cleanup-nodes",
            "--kubeconfig",
            kubeconfig,
            "--lease-name",
            "limitguard",
            "--lease-namespace",
            "guard",
        ]
    )
    assert code == 0
    both = stored(apiserver, "both")
    assert both["metadata"]["labels"] == {"kubernetes.io/hostname": "both", "team": "a"}
    assert both["spec"]["taints"] == [OTHER]
    assert stored(apiserver, "labels")["metadata"]["labels"] == {"kubernetes.io/hostname": "labels"}
    assert not stored(apiserver, "taint")["spec"].get("taints")
    assert sorted(name for name, _, _ in apiserver.node_patches) == [
        "both",
        "labels",
        "taint",
    ]  # "clean" untouched
    assert apiserver.lease("guard", "limitguard") is None


async def test_a_held_lease_is_waited_for_until_it_is_not_renewed(apiserver, tmp_path):
    apiserver.apply("leases", lease("limitguard-abc", duration=15))
    kubeconfig = write_kubeconfig(tmp_path, await apiserver.start())
    configuration, _ = load_configuration(kubeconfig)
    client = KubeClient(configuration)
    try:
        leases = KubeLeaseApi(client, "guard", "limitguard", 5.0)
        clock = FakeClock(autojump=True)
        started = clock.now()
        assert await wait_until_released(leases, clock, limit_seconds=60)
        assert 15 <= clock.now() - started <= 17  # its duration, by this process's own observation
        renewals = 0
        get = leases.get

        async def renewed():  # the holder renews between every two reads
            nonlocal renewals
            renewals += 1
            apiserver.apply("leases", lease("limitguard-abc"))
            return await get()

        leases.get = renewed
        assert not await wait_until_released(leases, clock, limit_seconds=30)
        assert renewals >= 30
    finally:
        await client.close()


async def _run(argv: list[str]) -> int:
    import asyncio

    return await asyncio.to_thread(main, argv)
