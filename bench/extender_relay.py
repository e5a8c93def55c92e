"""What a follower's relay of an extender call to its leader costs, counted in process, not timed.

Two replicas of limitguard's app serve in this process over TLS on 127.0.0.1, wired as `serve` wires
a replica set (limitguard.cli.replicas.route_through_leader; which one leads is fixed, not elected),
each over its own copy of a synthetic cluster (bench.synthetic). A kube-scheduler-like client sends a
filter and then a prioritize call of the passed names, one after another on one keep-alive
connection, for --requests pods, first to the leader and then to the follower, which forwards each
call's bytes to the leader's `/leader/extender/<verb>` and relays the answer. Per call, with a
profiler hook: the Python function calls made in aiohttp's and limitguard's modules of both replicas,
and the C functions they call (the client's own are asyncio's streams and are not counted), and the
bytes the relay adds on the replicas' connection (the call's body and its answer). Counts do not move
with the machine's load.

    python -m bench.extender_relay [--nodes 5000] [--pods 50000] [--candidates 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import orjson

from bench.synthetic import make_cluster
from limitguard.admission.forward import Forwarder
from limitguard.certs import generate as certs
from limitguard.cli.replicas import route_through_leader
from limitguard.core.config import Config, LimitAwareConfig, NoLeaderPolicy
from limitguard.kube.filefeed import load_cluster_file
from limitguard.kube.replica_metrics import ReplicaMetrics
from limitguard.state.store import ClusterState
from limitguard.testing.server import app_services, client_context, serving

COUNTED = ("/aiohttp/", "/limitguard/")
PEER_NAME = "limitguard.bench.svc"
GUARD_SECONDS = 120.0
WARM = 20  # pods sent before counting
CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 150, "memory": 120}))


class Fixed:
    """Leadership as the bench sets it."""

    def __init__(self, deciding: bool, address: str | None = None) -> None:
        self.deciding = deciding
        self.address = address

    def leader_address(self) -> str | None:
        return self.address


def extender_args(candidates: list[str], index: int) -> bytes:
    """A nodeCacheCapable call for one pod (Go field names), limiting 500m cpu and 1Gi."""
    resources = {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "1Gi"}}
    pod = {
        "metadata": {"name": f"relay-{index}", "namespace": "ns-1", "uid": f"relay-{index}"},
        "spec": {"containers": [{"name": "app", "resources": resources}]},
        "status": {"phase": "Pending"},
    }
    return orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": candidates})


def request_bytes(path: str, body: bytes) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n".encode()
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


async def answer(reader: asyncio.StreamReader) -> bytes:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), GUARD_SECONDS)
    assert head.startswith(b"HTTP/1.1 200"), head
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    return await reader.readexactly(length)


def state_of(cluster_file: Path) -> ClusterState:
    state = ClusterState()
    load_cluster_file(state, cluster_file)
    return state


async def count(cert_dir: Path, cluster_file: Path, candidates: list[str], requests: int) -> dict[str, float]:
    """Per extender call, sent to the leader and then through the follower: the calls counted, and
    the body bytes the relay carried."""
    ca, crt, key = (cert_dir / name for name in (certs.CA_CERT, certs.TLS_CERT, certs.TLS_KEY))
    figures: dict[str, float] = {}
    leader_services = app_services(state_of(cluster_file), CONFIG)
    leader_forwarder = Forwarder(ca, crt, key, 30.0, PEER_NAME)
    metrics = ReplicaMetrics(leader_services.metrics.registry)
    route_through_leader(
        leader_services, Fixed(True), leader_forwarder, NoLeaderPolicy.LOCAL, metrics, ca, PEER_NAME
    )
    async with serving(leader_services, cert_dir) as leader:
        follower_services = app_services(state_of(cluster_file), CONFIG)
        forwarder = Forwarder(ca, crt, key, 30.0, PEER_NAME)
        follower_leads = Fixed(False, f"127.0.0.1:{leader.port}")
        metrics = ReplicaMetrics(follower_services.metrics.registry)
        route_through_leader(
            follower_services, follower_leads, forwarder, NoLeaderPolicy.LOCAL, metrics, ca, PEER_NAME
        )
        async with serving(follower_services, cert_dir) as follower:
            for name, port in (("leader", leader.port), ("through the follower", follower.port)):
                counts, relayed = await calls_on(port, cert_dir, candidates, requests)
                for what, total in counts.items():
                    figures[f"{what}, {name}"] = total / (2 * requests)
                if name != "leader":
                    figures["body bytes relayed"] = relayed / (2 * requests)
            registry = follower_services.metrics.registry
            forwarded = sum(
                registry.get_sample_value(
                    "limitguard_extender_requests_total", {"verb": verb, "outcome": "forwarded"}
                )
                or 0.0
                for verb in ("filter", "prioritize")
            )
            assert forwarded == 2 * (WARM + requests), f"the follower relayed {forwarded:.0f} calls"
        await forwarder.close()
    await leader_forwarder.close()
    return figures


async def calls_on(
    port: int, cert_dir: Path, candidates: list[str], requests: int
) -> tuple[Counter[str], int]:
    """The calls counted while *requests* pods get a filter and a prioritize call on *port*, and the
    bytes of those calls' bodies and answers."""
    counts: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if any(part in frame.f_code.co_filename for part in COUNTED):
            if event == "call":
                counts["python calls"] += 1
            elif event == "c_call":
                counts["C calls"] += 1

    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=client_context(cert_dir), server_hostname="localhost"
    )
    carried = 0

    async def one_pod(index: int) -> int:
        body = extender_args(candidates, index)
        writer.write(request_bytes("/extender/filter", body))
        passed = orjson.loads(filtered := await answer(reader))["nodenames"]
        again = orjson.dumps({"Pod": orjson.loads(body)["Pod"], "Nodes": None, "NodeNames": passed})
        writer.write(request_bytes("/extender/prioritize", again))
        return len(body) + len(filtered) + len(again) + len(await answer(reader))

    for index in range(WARM):  # memos filled, connections (the replicas' too) open
        await one_pod(index)
    sys.setprofile(profile)
    try:
        for index in range(requests):
            carried += await one_pod(WARM + index)
    finally:
        sys.setprofile(None)
    writer.close()
    return counts, carried


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument(
        "--candidates", type=int, default=500, help="names per call (kube-scheduler: 10%% of 5,000 nodes)"
    )
    parser.add_argument("--requests", type=int, default=200, help="pods, each a filter and a prioritize call")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        cert_dir, cluster_file = Path(work) / "certs", Path(work) / "cluster.json"
        certs.write(certs.generate(["localhost", "127.0.0.1", PEER_NAME]), cert_dir)
        cluster_file.write_bytes(orjson.dumps(make_cluster(args.nodes, args.pods, pending=0)))
        candidates = [f"node-{index:05d}" for index in range(min(args.candidates, args.nodes))]
        runs = [
            asyncio.run(count(cert_dir, cluster_file, candidates, args.requests)) for _ in range(args.runs)
        ]
    command = " ".join(["python -m bench.extender_relay", *sys.argv[1:]])
    print(f"{command}: per extender call, median of {args.runs} runs (range)")
    for what in runs[0]:
        values = [run[what] for run in runs]
        print(f"  {what}: {statistics.median(values):,.1f} ({min(values):,.1f}-{max(values):,.1f})")


if __name__ == "__main__":
    main()
