"""The leader's room labeller against the fake apiserver, driven step by step (no real time)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import orjson

from limitguard.core.config import (
    AvoidFullNodes,
    Config,
    Enforcement,
    HintMode,
    LimitAwareConfig,
    PlacementHints,
)
from limitguard.core.roomlabels import is_room_label
from limitguard.kube.nodeapi import NodeApi
from limitguard.kube.roomlabels import RoomLabeller
from limitguard.kube.writes import ClusterWrites
from limitguard.testing.builders import make_namespace, node
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import Connected, eventually

CPU, MEMORY = "limitguard.io/limit-room-cpu", "limitguard.io/limit-room-memory"


def config(
    mode: HintMode = HintMode.AUTO,
    enforcement: Enforcement = Enforcement.DENY,
    avoid: bool = False,
    ratios: dict[str, int] | None = None,
    **limit_aware: Any,
) -> Config:
    return Config(
        limit_aware=LimitAwareConfig(
            default_ratios={"cpu": 100, "memory": 100} if ratios is None else ratios,
            enforcement=enforcement,
            **limit_aware,
        ),
        placement_hints=PlacementHints(mode, avoid_full_nodes=AvoidFullNodes(enabled=avoid)),
    )


def populate(apiserver: FakeApiServer, nodes: int = 3) -> None:
    apiserver.apply("namespaces", make_namespace("default"))
    for index in range(nodes):
        apiserver.apply("nodes", node(f"node-{index}", cpu="4", memory="8Gi"))


@dataclass
class Labelling:
    live: Connected
    apiserver: FakeApiServer
    labeller: RoomLabeller
    writes: ClusterWrites

    async def step(self) -> int:
        """Once the watch shows the apiserver's nodes: one look, every write it queued, and until the
        watch shows them again; returns how many patches the apiserver took."""
        await self.caught_up()
        before = len(self.apiserver.node_patches)
        await self.labeller.look()
        await self.writes.drain()
        await self.caught_up()
        return len(self.apiserver.node_patches) - before

    async def caught_up(self) -> None:
        """Until the node and pod watches have applied every change the apiserver made so far."""
        for kind in ("nodes", "pods"):
            await self.live.applied(kind, self.apiserver.rv)

        def same() -> bool:
            stored = {name: orjson.loads(item.body) for name, item in self.apiserver.objects["nodes"].items()}
            return all(
                (record := self.live.state.node(name)) is not None
                and dict(record.traits.labels) == (obj["metadata"].get("labels") or {})
                and len(record.traits.taints) == len(obj.get("spec", {}).get("taints") or ())
                for name, obj in stored.items()
            ) and len(stored) == sum(1 for _ in self.live.state.nodes())

        await eventually(same, "the watch shows every node as the apiserver stores it")

    def labels(self, name: str) -> dict[str, str]:
        """The room labels the apiserver stores on *name*."""
        stored = orjson.loads(self.apiserver.objects["nodes"][name].body)
        return {
            key: value
            for key, value in (stored["metadata"].get("labels") or {}).items()
            if is_room_label(key)
        }

    def taints(self, name: str) -> list[dict[str, Any]]:
        return orjson.loads(self.apiserver.objects["nodes"][name].body).get("spec", {}).get("taints") or []

    def relabeller(self, settings: Config) -> RoomLabeller:
        """Another labeller (a new leader, a new configuration) on the same state and queue."""
        return RoomLabeller(
            self.live.state, settings, self.writes, NodeApi(self.live.feed.client), self.live.clock
        )


async def labelling(apiserver: FakeApiServer, connect: Any, settings: Config, **writes: Any) -> Labelling:
    live = await connect(config=settings)
    queue = ClusterWrites(live.clock, **{"max_per_second": 1000.0, "burst": 1000, **writes})
    labeller = RoomLabeller(live.state, settings, queue, NodeApi(live.feed.client), live.clock)
    return Labelling(live, apiserver, labeller, queue)


__all__ = ["CPU", "MEMORY", "Labelling", "config", "labelling", "populate", "replace"]
