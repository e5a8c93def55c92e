"""A replica set on this machine for the replica benches: the fake apiserver and `limitguard serve`
replicas in processes of their own, and what a client reads of them (metrics, readiness, answers)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import orjson

from bench.harness import REPO, serve_command
from limitguard.testing.builders import binding


def start_fake_apiserver(
    nodes: int, pods: int, token: str, room_nodes: int, room_pods: int
) -> tuple[subprocess.Popen[str], str]:
    """The fake apiserver in its own process, with *room_nodes* empty nodes for the bursts."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "limitguard.testing.fakeapiserver"),
            *("--nodes", str(nodes), "--pods", str(pods), "--token", token, "--bookmark-interval", "5"),
            *("--room-nodes", str(room_nodes), "--room-pods", str(room_pods)),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, f"http://127.0.0.1:{int(process.stdout.readline())}"


def binding_body(index: int, pods: int, nodes: int) -> bytes:
    pod = index % pods
    namespace, name = f"ns-{pod % 50}", f"app-{pod:06d}"
    node = f"node-{(pod + 1) % nodes:05d}"  # not the pod's own node: checked and held in the ledger
    return orjson.dumps(binding(name, node, namespace=namespace, uid=f"bench-{index}"))


def start_replica(index: int, port: int, home: Path, kubeconfig: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "POD_NAME": f"bench-{index}", "POD_NAMESPACE": "bench", "POD_IP": "127.0.0.1"}
    return subprocess.Popen(
        serve_command(
            *("--config", str(home / "config.yaml"), "--kubeconfig", kubeconfig),
            *("--cert-dir", str(home / "certs")),
            port=port,
        ),
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
    )


async def metric(session: aiohttp.ClientSession, url: str, name: str) -> float | None:
    async with session.get(url + "/metrics") as response:
        for line in (await response.text()).splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


async def wait_for_leader(session: aiohttp.ClientSession, urls: list[str], deadline: float) -> int:
    while time.monotonic() < deadline:
        for index, url in enumerate(urls):
            try:
                if await metric(session, url, "limitguard_leader_deciding") == 1.0:
                    return index
            except aiohttp.ClientError:
                pass
        await asyncio.sleep(0.2)
    raise SystemExit("no deciding leader within the deadline")


async def wait_ready(session: aiohttp.ClientSession, urls: list[str], deadline: float) -> None:
    """Until every replica's /readyz answers 200 (its caches listed), not only the leader's gauge."""
    while time.monotonic() < deadline:
        statuses = []
        for url in urls:
            try:
                async with session.get(url + "/readyz") as response:
                    statuses.append(response.status)
            except aiohttp.ClientError:
                statuses.append(0)
        if all(status == 200 for status in statuses):
            return
        await asyncio.sleep(0.2)
    raise SystemExit("replicas not ready within the deadline")


async def post_review(session: aiohttp.ClientSession, url: str, body: bytes) -> dict:
    headers = {"Content-Type": "application/json"}
    timeout = aiohttp.ClientTimeout(total=10)
    async with session.post(url + "/validate", data=body, headers=headers, timeout=timeout) as response:
        return orjson.loads(await response.read())["response"]


async def forward_counts(session: aiohttp.ClientSession, url: str) -> dict[str, float]:
    """This replica's forwarded ledger requests, noLeaderPolicy answers and lost leaderships."""
    async with session.get(url + "/metrics") as response:
        lines = (await response.text()).splitlines()
    counts = {"forwarded": 0.0, "no-leader": 0.0, "lost": 0.0}
    for line in lines:
        name, _, value = line.rpartition(" ")
        if name.startswith("limitguard_forwarded_requests_total{"):
            counts["forwarded"] += float(value)
        elif name.startswith("limitguard_no_leader_answers_total{"):
            counts["no-leader"] += float(value)
        elif name.startswith("limitguard_leader_transitions_total{") and 'direction="lost"' in name:
            counts["lost"] += float(value)
    return counts


async def metric_labelled(session: aiohttp.ClientSession, url: str, name: str) -> str:
    async with session.get(url + "/metrics") as response:
        lines = (await response.text()).splitlines()
    return ", ".join(line.removeprefix(name) for line in lines if line.startswith(name + "{")) or "none"
