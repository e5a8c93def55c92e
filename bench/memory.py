"""Memory of a real `limitguard serve` under the attacks any client on the pod network can make.

Each attack gets a fresh server (a subprocess over a 1,000-node cluster file) so that its figures are
its own: RSS (VmRSS from /proc/<pid>/status) idle, at the height of the attack, and after it ended
(the server's deadlines have closed what it held), each with its ratio to the idle baseline of that
server. Attackers use many loopback addresses (127.0.0.2...) as many pods would. A good request is
sent during each attack: its status says whether the apiserver would still be served.

Run: `make bench-memory` (BENCH_MEMORY_ARGS="--only slow-headers"). Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import ssl
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson

from bench.admission import CONFIG
from bench.attacks import CROWD, CROWD_BODY, CROWD_PEERS, Attack, Crowd, good_request, post_head
from bench.harness import start, stop
from bench.procstat import hwm_mb, open_sockets, rss_mb
from bench.synthetic import make_cluster
from limitguard.certs import generate as certs
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.testing.builders import binding

NODES = 1000
PORT = 18543
HEADER_TIMEOUT = 10.0  # the defaults, so the figures are the shipped ones
BODY_TIMEOUT = 10.0
ANNOTATION_RESOURCES = 9363  # what fits a 256 KiB annotation


def real_nodes(count: int) -> list[dict]:
    """Nodes shaped like the real RKE2 GPU node of tests/fixtures (13.9 KB each, 22 images)."""
    source = Path(__file__).resolve().parents[1] / "tests/fixtures"
    node = orjson.loads((source / "nodelist-json-gpu-vgpu-a16-nvidia-gpu-capacity.edgexr.json").read_bytes())
    template = orjson.dumps(node["items"][0])
    made = []
    for index in range(count):
        copy = orjson.loads(template)
        copy["metadata"]["name"] = f"node-{index:05d}"
        made.append(copy)
    return made


def extender_args(count: int) -> bytes:
    from bench.extender import pod

    return orjson.dumps(
        {"Pod": pod("2"), "Nodes": {"metadata": {}, "items": real_nodes(count)}, "NodeNames": None}
    )


BINDING = orjson.dumps(binding("pod-000001", "node-00001", namespace="ns-1", uid="good"))


async def slow_headers(pid: int, port: int, context: ssl.SSLContext, row: Callable[..., None]) -> None:
    attack = Attack(port, context)
    await attack.open_many(5000, 10, lambda index: b"POST /validate HTTP/1.1\r\nHost: loc")
    row(
        "5,000 slow-header TLS sockets (10 addresses)",
        rss_mb(pid),
        await good_request(port, context, BINDING),
    )
    await asyncio.sleep(HEADER_TIMEOUT + 3)
    row("  after the header deadline", rss_mb(pid), await good_request(port, context, BINDING))
    attack.close()


async def stalled_bodies(pid: int, port: int, context: ssl.SSLContext, row: Callable[..., None]) -> None:
    attack = Attack(port, context)
    size = 4 * 1024 * 1024
    await attack.open_many(100, 10, lambda index: post_head("/validate", size) + b"x" * (size - 1))
    await asyncio.sleep(1)
    row("100 bodies stalled 1 byte short of 4 MiB", rss_mb(pid), await good_request(port, context, BINDING))
    await asyncio.sleep(BODY_TIMEOUT + 3)
    row("  after the body timeout", rss_mb(pid), await good_request(port, context, BINDING))
    attack.close()


async def stalled_extender(pid: int, port: int, context: ssl.SSLContext, row: Callable[..., None]) -> None:
    attack = Attack(port, context)
    size = 32 * 1024 * 1024
    chunk = b"x" * (1 << 20)

    async def one(index: int) -> None:
        connection = await attack.connect(f"127.0.0.{2 + index}")
        if connection is None:
            return
        writer = connection[1]
        with contextlib.suppress(OSError):
            writer.write(post_head("/extender/filter", size))
            for _ in range(31):
                writer.write(chunk)
                await writer.drain()
            writer.write(chunk[:-1])
            await writer.drain()

    await asyncio.gather(*(one(index) for index in range(6)))
    await asyncio.sleep(1)
    names = orjson.dumps({"Pod": {}, "Nodes": None, "NodeNames": ["node-00001"]})
    status = await good_request(port, context, names, "/extender/filter")
    row("6 extender bodies stalled 1 byte short of 32 MiB", rss_mb(pid), status)
    await asyncio.sleep(BODY_TIMEOUT + 3)
    row("  after the body timeout", rss_mb(pid), await good_request(port, context, names, "/extender/filter"))
    attack.close()


async def big_extender(pid: int, port: int, context: ssl.SSLContext, row: Callable[..., None]) -> None:
    for count in (750, 2300):  # 15,000 nodes' default candidates; the most a 32 MiB body holds
        body = extender_args(count)
        status = await good_request(port, context, body, "/extender/filter")
        row(f"valid ExtenderArgs, {count:,} full Nodes ({len(body) / 1e6:.1f} MB): peak", hwm_mb(pid), status)
    await asyncio.sleep(2)
    row("  after", rss_mb(pid), 0)


async def crowd(pid: int, port: int, context: ssl.SSLContext, row: Callable[..., None]) -> None:
    """The worst the connection and body caps allow at once: every connection held, slowly."""
    body = BINDING + b" " * (CROWD_BODY - len(BINDING))  # valid JSON: answered 200 if it arrives
    attackers = Crowd(port, context, body)
    handshakes = asyncio.Semaphore(200)
    tasks = [asyncio.ensure_future(attackers.one(index, handshakes)) for index in range(CROWD)]
    await attackers.plateau("headers")
    status = await good_request(port, context, BINDING)
    # the slot the good request took back is refilled by a connection that catches up with the
    # others' bodies, so that the next good request finds every connection receiving a body
    tasks.append(asyncio.ensure_future(attackers.one(CROWD, handshakes, header_seconds=4.0)))
    mb, _ = await attackers.phase_height("headers", pid)
    row(f"{CROWD:,} TLS connections ({CROWD_PEERS} addresses) sending headers slowly", mb, status)
    await attackers.plateau("body")
    status = await good_request(port, context, BINDING)
    mb, _ = await attackers.phase_height("body", pid)
    row(f"  then a {CROWD_BODY // 1024} KiB body each, slowly", mb, status)
    await asyncio.gather(*tasks)
    answers = ", ".join(f"{status or 'none'}: {n:,}" for status, n in sorted(attackers.statuses.items()))
    if attackers.attack.failed:
        answers += f", not connected: {attackers.attack.failed}"
    attackers.attack.close()
    await asyncio.sleep(2)
    row(f"  after ({answers})", rss_mb(pid), await good_request(port, context, BINDING))
    print(f"  {await refusal_counts(port, context)}")


async def refusal_counts(port: int, context: ssl.SSLContext) -> str:
    """The server's own count of what its bounds turned away (its /metrics)."""
    connection = await Attack(port, context).connect("127.0.0.1")
    if connection is None:
        return "metrics unreachable"
    reader, writer = connection
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    text = (await asyncio.wait_for(reader.read(-1), 30)).decode()
    writer.transport.abort()
    counts = [
        line.removeprefix("limitguard_")
        for line in text.splitlines()
        if line.startswith(("limitguard_connections_", "limitguard_bodies_")) and not line.endswith(" 0.0")
    ]
    return "server counted: " + (", ".join(counts) or "nothing refused")


SCENARIOS: dict[str, Callable[[int, int, ssl.SSLContext, Callable[..., None]], Awaitable[None]]] = {
    "slow-headers": slow_headers,
    "stalled-bodies": stalled_bodies,
    "stalled-extender": stalled_extender,
    "big-extender": big_extender,
    "crowd": crowd,
}


def annotated_cluster(path: Path, names_per_node: int) -> None:
    cluster = make_cluster(NODES, NODES * 10, 0)
    for item in cluster["items"]:
        if item["kind"] == "Node":
            index = item["metadata"]["name"]
            ratios = {f"example.com/{index}-r{k}": 150 for k in range(names_per_node)}
            item["metadata"]["annotations"][RATIO_ANNOTATION] = json.dumps(ratios)
    path.write_bytes(orjson.dumps(cluster))


def run(work: Path, context: ssl.SSLContext, only: set[str], server_path: str | None = None) -> None:
    config = work / "config.yaml"
    config.write_text(CONFIG)
    plain = work / "cluster.json"
    plain.write_bytes(orjson.dumps(make_cluster(NODES, NODES * 10, 0)))

    def serve(cluster: Path):
        command = [
            *(
                sys.executable,
                "-m",
                "limitguard",
                "serve",
                "--config",
                str(config),
                "--cluster",
                str(cluster),
            ),
            *("--cert-dir", str(work / "certs"), "--host", "127.0.0.1", "--port", str(PORT)),
            *("--log-level", "error"),
        ]
        env = None
        if server_path:  # a folder holding `limitguard` (e.g. an older checkout's webhook/)
            env = {**os.environ, "PYTHONPATH": server_path}
        return start(command, f"https://localhost:{PORT}/readyz", context, timeout=600, env=env)

    print(f"{'scenario':58} {'RSS MB':>8} {'x idle':>7} {'good request':>12} {'sockets':>8}")
    for name, scenario in SCENARIOS.items():
        if only and name not in only:
            continue
        server = serve(plain)
        try:
            time.sleep(1)
            idle = rss_mb(server.pid)

            def row(label: str, mb: float, status: int, idle: float = idle, pid: int = server.pid) -> None:
                sockets = open_sockets(pid)
                print(f"{label:58} {mb:8.1f} {mb / idle:7.2f} {status or '-':>12} {sockets:8}", flush=True)

            row(f"[{name}] idle, {NODES:,} nodes", idle, 0)
            asyncio.run(scenario(server.pid, PORT, context, row))
            row("  peak over the run (VmHWM)", hwm_mb(server.pid), 0)
        finally:
            stop(server)
    if not only or "annotations" in only:
        server = serve(plain)
        idle = rss_mb(server.pid)
        stop(server)
        for names in (ANNOTATION_RESOURCES, 32):
            path = work / f"annotated-{names}.json"
            annotated_cluster(path, names)
            server = serve(path)
            mb = rss_mb(server.pid)
            label = f"[annotations] {NODES:,} nodes naming {names:,} resources each"
            print(f"{label:58} {mb:8.1f} {mb / idle:7.2f} {'-':>12}  (idle {idle:.1f})", flush=True)
            stop(server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default="", help="comma-separated: " + ", ".join([*SCENARIOS, "annotations"])
    )
    parser.add_argument(
        "--server-path", help="serve limitguard from this folder (PYTHONPATH) to compare another version"
    )
    args = parser.parse_args()
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # the attackers' writes after a close
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
        context = ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
        run(work, context, {name for name in args.only.split(",") if name}, args.server_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
