"""N real `limitguard serve` instances in this process, live against the fake API server, over TLS.

Each replica gets the chart's Downward API identity (POD_NAME, POD_NAMESPACE, POD_IP), its own
kubeconfig through its own cuttable TCP proxy, and the election clock of the test (a ManualClock),
so leadership moves only when the test advances time. Bindings are sent as the apiserver sends them
(an AdmissionReview over HTTPS); an allowed one is persisted to the fake apiserver as the apiserver
would, so every replica's watch then sees the pod bound.
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml

from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import RunningServe, start_serve
from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.clock import ManualClock
from limitguard.testing.fakeapi import FakeApiServer
from limitguard.testing.server import client_context
from tests.integration.kube.helpers import eventually, write_kubeconfig
from tests.integration.kube.tcpproxy import TcpProxy
from tests.support import binding

NAMESPACE = "limitguard-system"
LEASE = "limitguard"
HANG_GUARD = 60.0


def config_file(directory: Path, policy: str, extra: dict[str, Any] | None = None) -> str:
    path = directory / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "limitguard.io/v1alpha1",
                "kind": "LimitGuardConfiguration",
                "limitAware": {"defaultLimitToAllocatableRatio": {"cpu": 125}},
                "replicas": {"noLeaderPolicy": policy},
                **(extra or {}),
            }
        )
    )
    return str(path)


def cluster(server: FakeApiServer, node_cpu: str, pods: int) -> None:
    """One node (capacity = cpu x 125%) and *pods* pending pods of 1 cpu each, none bound yet."""
    server.apply("namespaces", make_namespace("default"))
    server.apply("nodes", make_node("node1", cpu=node_cpu))
    for index in range(pods):
        server.apply("pods", make_pod("default", f"p-{index:03d}", "", cpu_limit="1", phase="Pending"))


@dataclass
class Member:
    name: str
    serve: RunningServe
    proxy: TcpProxy
    url: str
    alive: bool = True

    @property
    def elector(self) -> Any:
        assert self.serve.replica is not None
        return self.serve.replica.elector

    def counter(self, name: str, **labels: str) -> float:
        return self.serve.services.metrics.registry.get_sample_value(name, labels) or 0.0

    def pods_rv(self) -> int:
        version = self.serve.feed.reflectors["pods"].resource_version  # type: ignore[attr-defined]
        return int(version) if version else 0


@dataclass
class ReplicaSet:
    apiserver: FakeApiServer
    clock: ManualClock
    directory: Path
    members: list[Member] = field(default_factory=list)
    session: aiohttp.ClientSession | None = None
    admitted: list[str] = field(default_factory=list)  # pod names, in the order they were persisted
    _uids: itertools.count = field(default_factory=itertools.count)

    async def start(
        self, count: int, policy: str = "Deny", identity: bool = True, settings: dict[str, Any] | None = None
    ) -> None:
        """*identity* False: no Downward API variables, so each replica decides alone (the old behaviour);
        *settings*: more sections of the configuration file."""
        url = await self.apiserver.start()
        cert_dir = self.directory / "certs"
        config = config_file(self.directory, policy, settings)
        for index in range(count):
            proxy = TcpProxy("127.0.0.1", self.apiserver.port)
            await proxy.start()
            home = self.directory / f"replica-{index}"
            home.mkdir()
            kubeconfig = write_kubeconfig(home, url.replace(str(self.apiserver.port), str(proxy.port)))
            parser = argparse.ArgumentParser()
            add_arguments(parser)
            args = parser.parse_args(
                [
                    *("--config", config, "--kubeconfig", kubeconfig, "--cert-dir", str(cert_dir)),
                    *("--host", "127.0.0.1", "--port", "0", "--lease-name", LEASE),
                ]
            )
            name = f"limitguard-{index}"
            environ = (
                {"POD_NAME": name, "POD_NAMESPACE": NAMESPACE, "POD_IP": "127.0.0.1"} if identity else {}
            )
            running = await start_serve(args, environ, self.clock)
            self.members.append(Member(name, running, proxy, f"https://127.0.0.1:{running.port}"))
            await eventually(lambda r=running: r.services.state.ready, f"{name} synced", HANG_GUARD)
            if identity:
                await self.idle(self.members[-1])
        context = client_context(cert_dir)
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=200))

    async def idle(self, member: Member) -> None:
        """Its election round is over once its elector sleeps on the test's clock."""
        assert member.serve.replica is not None
        task = member.serve.replica.task
        await eventually(lambda: self.clock.is_sleeping(task), f"{member.name} elector idle", HANG_GUARD)

    def leaders(self) -> list[Member]:
        return [member for member in self.members if member.alive and member.elector.leading]

    def deciding(self) -> list[Member]:
        return [member for member in self.members if member.alive and member.elector.deciding]

    async def elected(self) -> Member:
        """The one deciding leader, once it has caught up (the watch brings it there by itself)."""
        await eventually(lambda: len(self.deciding()) == 1, "one deciding leader", HANG_GUARD)
        return self.deciding()[0]

    async def bind(
        self, member: Member, pod: str, node: str = "node1", persist: bool = True
    ) -> dict[str, Any]:
        """Send the scheduler's bind for *pod* to *member*; persist it when allowed, like the apiserver."""
        assert self.session is not None
        review = binding(pod, node, uid=f"bind-{next(self._uids)}")
        try:
            async with self.session.post(
                member.url + "/validate",
                data=orjson.dumps(review),
                headers={"Content-Type": "application/json"},
            ) as answer:
                assert answer.status == 200, await answer.text()
                response = (await answer.json())["response"]
        except aiohttp.ClientError:
            return {"allowed": False, "lost": True}  # a killed replica: the scheduler would retry
        if response["allowed"] and persist:
            self.persist(pod, node)
        return response

    def persist(self, pod: str, node: str = "node1") -> None:
        """What the apiserver does with an admitted binding: the pod is bound, every watch sees it."""
        self.apiserver.apply("pods", make_pod("default", pod, node, cpu_limit="1", phase="Pending"))
        self.admitted.append(pod)

    async def all_seen(self) -> None:
        """Every live replica's pod cache has applied everything the apiserver holds."""
        rv = self.apiserver.rv
        await eventually(
            lambda: all(m.pods_rv() >= rv for m in self.members if m.alive and not m.proxy.cut_off),
            f"pod caches at rv {rv}",
            HANG_GUARD,
        )

    async def kill(self, member: Member) -> None:
        """A crash: the server and its watches go away, the Lease stays as it was last renewed."""
        member.alive = False
        await member.serve.stop(release=False)

    async def stop(self) -> None:
        for member in self.members:
            if member.alive:
                member.alive = False
                await member.serve.stop(release=False)
            await member.proxy.stop()
        if self.session is not None:
            await self.session.close()
