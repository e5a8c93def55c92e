"""The real parts: the fake apiserver and `limitguard serve` as processes, and the HTTPS calls the
apiserver and kube-scheduler would make to limitguard (mutate, validate a binding, extender verbs)."""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import re
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import orjson

from bench.harness import REPO, serve_command, start, start_fake_apiserver, stop
from bench.placement.scenarios import RATIO, Scenario, labelled, namespace
from limitguard.certs import generate as certs
from limitguard.core.roomlabels import FullThreshold
from limitguard.testing.builders import binding, pod_create
from limitguard.testing.kubeconfig import write_kubeconfig

TOKEN = "placement-bench"
HINTS_KEY = "placementHints"
ADDED = re.compile(r'^limitguard_watch_events_total\{kind="pods",type="ADDED"\} (\S+)$', re.M)
WRITES = re.compile(r'^limitguard_cluster_writes_total\{kind="([^"]+)",result="([^"]+)"\} (\S+)$', re.M)
DEFERRED = re.compile(r'^limitguard_cluster_writes_deferred_total\{kind="([^"]+)"\} (\S+)$', re.M)
RELAYED = re.compile(r'^limitguard_extender_requests_total\{[^}]*outcome="forwarded"[^}]*\} (\S+)$', re.M)
HINT_MODES = ("hints", "hints-avoid")  # the modes limitguard gives hints (and keeps room labels) in
AVOID = FullThreshold(below=10, hysteresis=5)  # placementHints.avoidFullNodes' defaults


def supports_hints() -> bool:
    """Whether this limitguard knows the placementHints setting (its configuration schema says)."""
    schema = orjson.loads(
        (REPO / "webhook" / "limitguard" / "schemas" / "limitguard-config.schema.json").read_bytes()
    )
    return HINTS_KEY in schema.get("properties", {})


def config_text(mode: str, max_per_second: float, burst: int) -> str:
    ratio = ", ".join(f"{resource}: {percent}" for resource, percent in RATIO.items())
    text = (
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
        f"limitAware:\n  defaultLimitToAllocatableRatio: {{{ratio}}}\n  enforcement: Deny\n"
        "excludedNamespaces: [kube-system]\n"
        f"clusterWrites: {{maxPerSecond: {max_per_second}, burst: {burst}}}\n"
    )
    if supports_hints():
        avoid = ", avoidFullNodes: {enabled: true}" if mode == "hints-avoid" else ""
        text += f"{HINTS_KEY}: {{mode: {'Auto' if mode in HINT_MODES else 'Never'}{avoid}}}\n"
    return text


class Live:
    """One fake apiserver holding *scenario*'s cluster and *replicas* `limitguard serve` watching it.

    With two replicas (a replica set: the Downward API variables, one Lease) the apiserver's webhook
    calls alternate between them, as its connections to the Service spread over its endpoints (a
    follower forwards bindings to the leader), and kube-scheduler's extender calls go to one of them:
    its HTTP client keeps one connection alive (Go's Transport; kube-scheduler's extender.go
    makeTransport), which the Service's proxy sent to one endpoint. *extender_via* says which."""

    def __init__(
        self,
        scenario: Scenario,
        mode: str,
        port: int,
        max_per_second: float = 5.0,
        burst: int = 10,
        replicas: int = 1,
        extender_via: str = "leader",
    ) -> None:
        self.scenario, self.mode, self.port = scenario, mode, port
        self.max_per_second, self.burst = max_per_second, burst
        self.replicas, self.extender_via = replicas, extender_via
        self.urls = [f"https://localhost:{port + index}" for index in range(replicas)]
        self.url = self.urls[0]  # the leader's, once one is elected
        self.extender_url = self.url
        self._binding_urls = itertools.cycle(self.urls)
        self._work = tempfile.TemporaryDirectory(prefix="limitguard-placement-")
        self._processes: list[subprocess.Popen] = []
        self._uids = itertools.count()
        self.unchecked = 0  # bindings answered without a check (the pod not yet in limitguard's cache)
        self.nodes: list[dict[str, Any]] = scenario.nodes  # as written to the apiserver
        self.session: aiohttp.ClientSession | None = None  # the apiserver's calls to the webhooks
        self.scheduler: aiohttp.ClientSession | None = None  # kube-scheduler's to the extender

    async def __aenter__(self) -> Live:
        work = Path(self._work.name)
        api, self.api_url = await asyncio.to_thread(start_fake_apiserver, 0, 0, TOKEN)
        self._processes.append(api)
        self.api = aiohttp.ClientSession()
        await self.write("namespaces", [namespace()])
        nodes = self.scenario.nodes
        if self.mode in HINT_MODES:  # labelled as after a while: the run measures the steady state
            nodes = labelled(nodes, self.scenario.bound, AVOID if self.mode == "hints-avoid" else None)
        self.nodes = nodes
        await self.write("nodes", nodes)
        await self.write("pods", self.scenario.bound)
        (work / "config.yaml").write_text(config_text(self.mode, self.max_per_second, self.burst))
        certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
        context = ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
        kubeconfig = write_kubeconfig(work, self.api_url, token=TOKEN)
        options = ("--config", str(work / "config.yaml"), "--kubeconfig", kubeconfig)
        for index, url in enumerate(self.urls):
            command = serve_command(*options, "--cert-dir", str(work / "certs"), port=self.port + index)
            env = None
            if self.replicas > 1:  # a replica set member, as the chart's Downward API makes it
                identity = {"POD_NAME": f"placement-{index}", "POD_NAMESPACE": "limitguard"}
                env = {**os.environ, **identity, "POD_IP": "127.0.0.1"}
            server = await asyncio.to_thread(start, command, f"{url}/readyz", context, 300, env)
            self._processes.insert(0, server)
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=64))
        if self.replicas > 1:
            leader = await self.leader()
            self.url = self.urls[leader]
            self.extender_url = self.urls[leader if self.extender_via == "leader" else 1 - leader]
        else:
            self.extender_url = self.url
        # kube-scheduler's calls are one at a time (filter, then prioritize): one kept-alive connection
        self.scheduler = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=1))
        self.added_before = [await self.pods_added(url) for url in self.urls]
        return self

    async def leader(self, timeout: float = 120) -> int:
        """The index of the replica that decides (limitguard_leader_deciding 1)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, url in enumerate(self.urls):
                if await self.gauge(url, "limitguard_leader_deciding") == 1.0:
                    return index
            await asyncio.sleep(0.2)
        raise RuntimeError("no replica became the deciding leader in time")

    async def metrics_text(self, url: str) -> str:
        assert self.session is not None
        async with self.session.get(url + "/metrics") as response:
            return await response.text()

    async def gauge(self, url: str, name: str) -> float | None:
        found = re.search(rf"^{name} (\S+)$", await self.metrics_text(url), re.M)
        return float(found.group(1)) if found else None

    async def __aexit__(self, *exc: object) -> None:
        for session in (self.session, self.scheduler):
            if session is not None:
                await session.close()
        await self.api.close()
        await asyncio.to_thread(stop, *self._processes)
        self._work.cleanup()

    async def _post(
        self, path: str, body: Any, url: str | None = None, session: aiohttp.ClientSession | None = None
    ) -> Any:
        """POST *body* to *url* (default: the leader) through *session* (default: the apiserver's)."""
        session = session or self.session
        assert session is not None
        headers = {"Content-Type": "application/json"}
        async with session.post(
            (url or self.url) + path, data=orjson.dumps(body), headers=headers
        ) as response:
            return orjson.loads(await response.read())

    async def write(self, kind: str, items: list[dict[str, Any]]) -> None:
        """Store objects in the fake apiserver (a pod created, or its binding persisted)."""
        body = orjson.dumps({"kind": kind, "items": items})
        async with self.api.post(self.api_url + "/_fake/apply", data=body) as response:
            assert response.status == 200, await response.text()

    async def api_rv(self) -> str:
        async with self.api.get(self.api_url + "/_fake/rv") as response:
            return str((await response.json())["rv"])

    async def watch_nodes(self, since: str, seen: Callable[[str, dict[str, Any], float], None]) -> None:
        """Node events from the apiserver after *since*, as kube-scheduler's informer gets them:
        *seen*(type, node, time.monotonic()) for each, until cancelled."""
        params = {"watch": "true", "resourceVersion": since, "timeoutSeconds": "3600"}
        headers = {"Authorization": f"Bearer {TOKEN}"}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with self.api.get(
            self.api_url + "/api/v1/nodes", params=params, headers=headers, timeout=timeout
        ) as response:
            async for line in response.content:
                if line.strip():
                    event = orjson.loads(line)
                    seen(event["type"], event["object"], time.monotonic())

    async def cluster_writes(self) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
        """limitguard's cluster writes by (kind, result), and those deferred by the rate, by kind."""
        text = await self.metrics_text(self.url)
        writes = {(kind, result): int(float(value)) for kind, result, value in WRITES.findall(text)}
        return writes, {kind: int(float(value)) for kind, value in DEFERRED.findall(text)}

    async def label_backlog(self) -> tuple[int, float]:
        """(writes waiting in limitguard's queue, seconds the stalest room label has waited)."""
        queued = await self.gauge(self.url, "limitguard_cluster_writes_queued")
        stalest = await self.gauge(self.url, "limitguard_room_labels_stalest_seconds")
        return int(queued or 0), float("nan") if stalest is None else stalest

    async def extender_relayed(self) -> int:
        """Extender calls the replica kube-scheduler talks to relayed from the leader (outcome
        `forwarded`; 0 on the leader, and where limitguard does not forward them)."""
        return int(sum(float(value) for value in RELAYED.findall(await self.metrics_text(self.extender_url))))

    async def pods_added(self, url: str) -> int:
        return int(sum(float(value) for value in ADDED.findall(await self.metrics_text(url))))

    async def wait_seen(self, created: int, timeout: float = 120) -> None:
        """Until every replica's watch has added *created* pods since the start: a binding for a
        pod its cache lacks would be answered unchecked."""
        deadline = time.monotonic() + timeout
        for url, before in zip(self.urls, self.added_before, strict=True):
            while await self.pods_added(url) < before + created:
                if time.monotonic() > deadline:
                    raise RuntimeError("limitguard did not see the created pods in time")
                await asyncio.sleep(0.01)

    async def mutate(self, pod: dict[str, Any]) -> dict[str, Any]:
        """The pod as the apiserver stores it after limitguard's mutating webhook."""
        answer = (await self._post("/mutate", pod_create(pod, uid=f"create-{next(self._uids)}")))["response"]
        if not answer.get("patch"):
            return pod
        patch = orjson.loads(base64.b64decode(answer["patch"]))
        return jsonpatch.apply_patch(pod, patch)

    async def bind(self, pod: dict[str, Any], node: str) -> bool:
        metadata = pod["metadata"]
        review = binding(
            metadata["name"],
            node,
            namespace=metadata["namespace"],
            uid=f"bind-{next(self._uids)}",
            pod_uid=metadata["uid"],
        )
        answer = (await self._post("/validate", review, next(self._binding_urls)))["response"]
        if answer["allowed"] and any("not checked" in w for w in answer.get("warnings") or ()):
            self.unchecked += 1
        return bool(answer["allowed"])

    async def extender_filter(self, pod: dict[str, Any], names: list[str]) -> list[str]:
        """kube-scheduler's filter call to a nodeCacheCapable extender: the names that pass."""
        answer = await self._extender("filter", pod, names)
        if answer.get("error"):
            raise RuntimeError(f"extender filter: {answer['error']}")
        return list(answer.get("nodenames") or [])

    async def extender_prioritize(self, pod: dict[str, Any], names: list[str]) -> dict[str, int]:
        answer = await self._extender("prioritize", pod, names)
        return {entry["host"]: int(entry["score"]) for entry in answer}

    async def _extender(self, verb: str, pod: dict[str, Any], names: list[str]) -> Any:
        body = {"Pod": pod, "Nodes": None, "NodeNames": names}
        return await self._post(f"/extender/{verb}", body, self.extender_url, self.scheduler)
