"""The real parts: the fake apiserver and `limitguard serve` as processes, and the HTTPS calls the
apiserver and kube-scheduler would make to limitguard (mutate, validate a binding, extender verbs)."""

from __future__ import annotations

import asyncio
import base64
import itertools
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
    """One fake apiserver holding *scenario*'s cluster and one `limitguard serve` watching it."""

    def __init__(
        self, scenario: Scenario, mode: str, port: int, max_per_second: float = 5.0, burst: int = 10
    ) -> None:
        self.scenario, self.mode, self.port = scenario, mode, port
        self.max_per_second, self.burst = max_per_second, burst
        self.url = f"https://localhost:{port}"
        self._work = tempfile.TemporaryDirectory(prefix="limitguard-placement-")
        self._processes: list[subprocess.Popen] = []
        self._uids = itertools.count()
        self.unchecked = 0  # bindings answered without a check (the pod not yet in limitguard's cache)
        self.nodes: list[dict[str, Any]] = scenario.nodes  # as written to the apiserver
        self.session: aiohttp.ClientSession | None = None

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
        command = serve_command(
            *(
                "--config",
                str(work / "config.yaml"),
                "--kubeconfig",
                kubeconfig,
                "--cert-dir",
                str(work / "certs"),
            ),
            port=self.port,
        )
        server = await asyncio.to_thread(start, command, f"{self.url}/readyz", context, 300)
        self._processes.insert(0, server)
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=64))
        self.added_before = await self.pods_added()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.session is not None:
            await self.session.close()
        await self.api.close()
        await asyncio.to_thread(stop, *self._processes)
        self._work.cleanup()

    async def _post(self, path: str, body: Any) -> Any:
        assert self.session is not None
        headers = {"Content-Type": "application/json"}
        async with self.session.post(self.url + path, data=orjson.dumps(body), headers=headers) as response:
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
        assert self.session is not None
        async with self.session.get(self.url + "/metrics") as response:
            text = await response.text()
        writes = {(kind, result): int(float(value)) for kind, result, value in WRITES.findall(text)}
        return writes, {kind: int(float(value)) for kind, value in DEFERRED.findall(text)}

    async def label_backlog(self) -> tuple[int, float]:
        """(writes waiting in limitguard's queue, seconds the stalest room label has waited)."""
        assert self.session is not None
        async with self.session.get(self.url + "/metrics") as response:
            text = await response.text()
        queued = re.search(r"^limitguard_cluster_writes_queued (\S+)$", text, re.M)
        stalest = re.search(r"^limitguard_room_labels_stalest_seconds (\S+)$", text, re.M)
        return (
            int(float(queued.group(1))) if queued else 0,
            float(stalest.group(1)) if stalest else float("nan"),
        )

    async def pods_added(self) -> int:
        assert self.session is not None
        async with self.session.get(self.url + "/metrics") as response:
            return int(sum(float(value) for value in ADDED.findall(await response.text())))

    async def wait_seen(self, created: int, timeout: float = 120) -> None:
        """Until limitguard's watch has added *created* pods since the start: a binding for a pod
        its cache lacks would be answered unchecked."""
        deadline = time.monotonic() + timeout
        while await self.pods_added() < self.added_before + created:
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
        answer = (await self._post("/validate", review))["response"]
        if answer["allowed"] and any("not checked" in w for w in answer.get("warnings") or ()):
            self.unchecked += 1
        return bool(answer["allowed"])

    async def extender_filter(self, pod: dict[str, Any], names: list[str]) -> list[str]:
        """kube-scheduler's filter call to a nodeCacheCapable extender: the names that pass."""
        answer = await self._post("/extender/filter", {"Pod": pod, "Nodes": None, "NodeNames": names})
        if answer.get("error"):
            raise RuntimeError(f"extender filter: {answer['error']}")
        return list(answer.get("nodenames") or [])

    async def extender_prioritize(self, pod: dict[str, Any], names: list[str]) -> dict[str, int]:
        answer = await self._post("/extender/prioritize", {"Pod": pod, "Nodes": None, "NodeNames": names})
        return {entry["host"]: int(entry["score"]) for entry in answer}
