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
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import orjson

from bench.harness import REPO, serve_command, start, start_fake_apiserver, stop
from bench.placement.scenarios import RATIO, Scenario, namespace
from limitguard.certs import generate as certs
from limitguard.testing.builders import binding, pod_create
from limitguard.testing.kubeconfig import write_kubeconfig

TOKEN = "placement-bench"
HINTS_KEY = "placementHints"
ADDED = re.compile(r'^limitguard_watch_events_total\{kind="pods",type="ADDED"\} (\S+)$', re.M)


def supports_hints() -> bool:
    """Whether this limitguard knows the placementHints setting (its configuration schema says)."""
    schema = orjson.loads(
        (REPO / "webhook" / "limitguard" / "schemas" / "limitguard-config.schema.json").read_bytes()
    )
    return HINTS_KEY in schema.get("properties", {})


def config_text(hints: bool) -> str:
    ratio = ", ".join(f"{resource}: {percent}" for resource, percent in RATIO.items())
    text = (
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
        f"limitAware:\n  defaultLimitToAllocatableRatio: {{{ratio}}}\n  enforcement: Deny\n"
        "excludedNamespaces: [kube-system]\n"
    )
    if supports_hints():
        text += f"{HINTS_KEY}: {{mode: {'Auto' if hints else 'Never'}}}\n"
    return text


class Live:
    """One fake apiserver holding *scenario*'s cluster and one `limitguard serve` watching it."""

    def __init__(self, scenario: Scenario, hints: bool, port: int) -> None:
        self.scenario, self.hints, self.port = scenario, hints, port
        self.url = f"https://localhost:{port}"
        self._work = tempfile.TemporaryDirectory(prefix="limitguard-placement-")
        self._processes: list[subprocess.Popen] = []
        self._uids = itertools.count()
        self.unchecked = 0  # bindings answered without a check (the pod not yet in limitguard's cache)
        self.session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Live:
        work = Path(self._work.name)
        api, self.api_url = await asyncio.to_thread(start_fake_apiserver, 0, 0, TOKEN)
        self._processes.append(api)
        self.api = aiohttp.ClientSession()
        await self.write("namespaces", [namespace()])
        await self.write("nodes", self.scenario.nodes)
        await self.write("pods", self.scenario.bound)
        (work / "config.yaml").write_text(config_text(self.hints))
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
