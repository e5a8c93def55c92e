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
from limitguard.certs import generate as certs
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.http.limits import ServingLimits
from limitguard.testing.builders import binding
from limitguard.testing.tlsclient import connect_from

from bench.admission import CONFIG
from bench.harness import start, stop
from bench.synthetic import make_cluster

NODES = 1000
PORT = 18543
HEADER_TIMEOUT = 10.0  # the defaults, so the figures are the shipped ones
BODY_TIMEOUT = 10.0
ANNOTATION_RESOURCES = 9363  # what fits a 256 KiB annotation
HEADERS_END = b"\r\n\r\n"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_sockets(pid: int) -> int:
    """The server's open sockets (its connections, the listener and its own client sockets)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            count += fd.readlink().name.startswith("socket:")
    return count


def hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Attack:
    """Connections from many loopback addresses to one server."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.port, self.context = port, context
        self.writers: list[asyncio.StreamWriter] = []
        self.failed = 0

    async def connect(self, peer: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            reader, writer = await connect_from(peer, self.port, self.context, 30)
        except (OSError, TimeoutError, ssl.SSLError):
            self.failed += 1
            return None
        self.writers.append(writer)
        return reader, writer

    async def open_many(self, count: int, peers: int, first_bytes: Callable[[int], bytes]) -> None:
        semaphore = asyncio.Semaphore(200)

        async def one(index: int) -> None:
            async with semaphore:
                connection = await self.connect(f"127.0.0.{2 + index % peers}")
                if connection is not None:
                    with contextlib.suppress(OSError):
                        connection[1].write(first_bytes(index))
                        await asyncio.wait_for(connection[1].drain(), 30)

        await asyncio.gather(*(one(index) for index in range(count)))

    def close(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()


async def good_request(port: int, context: ssl.SSLContext, body: bytes, path: str = "/validate") -> int:
    """One request from 127.0.0.1 (the apiserver's address here): its HTTP status, 0 if none."""
    attack = Attack(port, context)
    connection = await attack.connect("127.0.0.1")
    if connection is None:
        return 0
    reader, writer = connection
    writer.write(
        b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        % (path.encode(), len(body), body)
    )
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        return int(head.split(b" ")[1])
    except (OSError, TimeoutError, asyncio.IncompleteReadError):
        return 0
    finally:
        attack.close()


def post_head(path: str, length: int) -> bytes:
    return (
        b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % (path.encode(), length)
    )


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


LIMITS = ServingLimits()  # the server runs with its defaults
CROWD = LIMITS.max_connections  # every connection the server keeps
CROWD_PEERS = 8  # each address within its share of connections and of body bytes
# all of them together fill the body bytes in flight exactly
CROWD_BODY = LIMITS.max_body_bytes_in_flight // CROWD
TRICKLE_SECONDS = 8.0  # each phase ends before its 10 s deadline
TRICKLE_PIECES = 8


class Crowd:
    """CROWD TLS connections, each sending its headers, then its body, a piece a second."""

    def __init__(self, port: int, context: ssl.SSLContext, body: bytes) -> None:
        self.attack = Attack(port, context)
        self.head = post_head("/validate", len(body))
        self.body = body
        self.phase = {"headers": 0, "body": 0, "answered": 0}
        self.statuses: dict[int, int] = {}

    async def trickle(self, writer: asyncio.StreamWriter, data: bytes, seconds: float) -> None:
        piece = -(-len(data) // TRICKLE_PIECES)
        for offset in range(0, len(data), piece):
            writer.write(data[offset : offset + piece])
            await writer.drain()
            await asyncio.sleep(seconds / TRICKLE_PIECES)

    async def one(
        self, index: int, handshakes: asyncio.Semaphore, header_seconds: float = TRICKLE_SECONDS
    ) -> None:
        async with handshakes:
            connection = await self.attack.connect(f"127.0.0.{2 + index % CROWD_PEERS}")
        if connection is None:
            return
        reader, writer = connection
        status = 0
        try:
            self.phase["headers"] += 1
            await self.trickle(writer, self.head, header_seconds)
            self.phase["headers"] -= 1
            self.phase["body"] += 1
            await self.trickle(writer, self.body, TRICKLE_SECONDS)
            self.phase["body"] -= 1
            head = await asyncio.wait_for(reader.readuntil(HEADERS_END), 30)
            status = int(head.split(b" ")[1])
            self.phase["answered"] += 1
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        self.statuses[status] = self.statuses.get(status, 0) + 1

    async def plateau(self, name: str) -> None:
        """Until the count in phase *name* has stopped growing for a second (all are in it)."""
        best, still = -1, 0
        while still < 4 or best <= 0:
            await asyncio.sleep(0.25)
            now = self.phase[name]
            best, still = (now, 0) if now > best else (best, still + 1)

    async def phase_height(self, name: str, pid: int) -> tuple[float, int]:
        """The highest RSS and count while phase *name* lasts (until a tenth have left it)."""
        best, mb = -1, 0.0
        while True:
            now = self.phase[name]
            best, mb = max(best, now), max(mb, rss_mb(pid))
            if best > 0 and now < best * 0.9:
                return mb, best
            await asyncio.sleep(0.25)


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
        if server_path:  # a folder holding `limitguard` (e.g. a link to an older checkout's webhook/)
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
