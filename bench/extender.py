"""Extender benchmark: prioritize p99 over 5,000 candidate nodes, filter throughput and the preempt
verb, over TLS.

Builds a synthetic cluster (default 5,000 nodes, 50,000 pods), starts one server subprocess that
serves limitguard's extender routes *and* a no-op baseline (/noop/filter, /noop/prioritize,
/noop/preempt: same body read and decoding, then an answer with no policy: all pass, scores 0,
victims as proposed), and drives both with the same keep-alive HTTPS client in this process. Also
times Extender.prioritize and Preemption.preempt in-process (no HTTP).

The preempt scenario is what a nodeCacheCapable kube-scheduler sends at this size: DefaultPreemption
dry-runs max(10% of the nodes, 100) candidates (`--preempt-candidates`, default 500 for 5,000
nodes), each with its victims by UID (`--victims`, default 2).

    python -m bench.extender                         # full size
    python -m bench.extender --nodes 1000 --requests 100   # quick
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from bench.admission import CONFIG
from bench.harness import REPO, percentile_ms, stop
from bench.synthetic import make_cluster
from limitguard.certs import generate as certs

# Every scorer counted: the heaviest prioritize.
EXTENDER_CONFIG = {
    "scorers": [
        {"name": "LimitAware", "weight": 2},
        {"name": "NodeResourcesFitPlus", "weight": 1},
        {"name": "ScarceResourceAvoidance", "weight": 1, "args": {"resources": ["nvidia.com/gpu"]}},
        {"name": "PodState", "weight": 1},
    ]
}


def pod(cpu: str) -> dict:
    return {
        "metadata": {"name": "bench", "namespace": "ns-1", "uid": "bench-uid"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "256Mi"},
                        "limits": {"cpu": cpu, "memory": "1Gi"},
                    },
                }
            ]
        },
        "status": {"phase": "Pending"},
    }


def body(nodes: int, cpu: str = "2") -> bytes:
    """Go-encoded ExtenderArgs of a nodeCacheCapable extender."""
    return orjson.dumps(
        {"Pod": pod(cpu), "Nodes": None, "NodeNames": [f"node-{i:05d}" for i in range(nodes)]}
    )


def preempt_body(nodes: int, candidates: int, victims: int, cpu: str = "2") -> bytes:
    """Go-encoded ExtenderPreemptionArgs of a nodeCacheCapable extender: the first *candidates*
    nodes, each with *victims* of the pods make_cluster bound to it (pod i is on node i % nodes)."""
    meta = {
        f"node-{node:05d}": {
            "Pods": [{"UID": f"pod-uid-{node + k * nodes}"} for k in range(victims)],
            "NumPDBViolations": 0,
        }
        for node in range(candidates)
    }
    return orjson.dumps({"Pod": pod(cpu), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta})


# -- server subprocess ----------------------------------------------------------------------------
def serve(cluster: str, config: str, cert_dir: str, port: int) -> None:
    from aiohttp import web

    from limitguard.cli.configfile import load_config
    from limitguard.cli.startup import build_services
    from limitguard.extender import extender_config_from_mapping
    from limitguard.extender.preempt import proposed
    from limitguard.extender.protocol import decode_extender_args, encode_filter_result, encode_priorities
    from limitguard.extender.victims import decode_preemption_args, encode_preemption_result
    from limitguard.http.app import create_app
    from limitguard.http.tls import server_context
    from limitguard.kube.filefeed import load_cluster_file
    from limitguard.state.store import ClusterState

    state = ClusterState()
    load_cluster_file(state, cluster)
    services = build_services(load_config(config), state)
    services.extender_config = extender_config_from_mapping(EXTENDER_CONFIG)
    app = create_app(services)

    async def noop(request: web.Request) -> web.Response:
        if request.path.endswith("preempt"):
            victims = decode_preemption_args(await request.content.read()).victims
            return web.Response(
                body=encode_preemption_result(proposed(victims)), content_type="application/json"
            )
        args = decode_extender_args(await request.content.read())
        if request.path.endswith("filter"):
            return web.Response(
                body=encode_filter_result(args, args.node_names, {}), content_type="application/json"
            )
        return web.Response(
            body=encode_priorities((n, 0) for n in args.node_names), content_type="application/json"
        )

    app.router.add_post("/noop/filter", noop)
    app.router.add_post("/noop/prioritize", noop)
    app.router.add_post("/noop/preempt", noop)
    context = server_context(Path(cert_dir) / certs.TLS_CERT, Path(cert_dir) / certs.TLS_KEY)
    print("ready", flush=True)
    web.run_app(app, host="127.0.0.1", port=port, ssl_context=context, print=None, access_log=None)


# -- client ---------------------------------------------------------------------------------------
async def sequential(session: aiohttp.ClientSession, url: str, payload: bytes, count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        started = time.perf_counter()
        async with session.post(url, data=payload, headers={"Content-Type": "application/json"}) as response:
            assert response.status == 200, await response.text()
            await response.read()
        latencies.append(time.perf_counter() - started)
    return latencies


async def throughput(
    session: aiohttp.ClientSession, url: str, payload: bytes, count: int, workers: int
) -> float:
    remaining = count

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            async with session.post(
                url, data=payload, headers={"Content-Type": "application/json"}
            ) as response:
                assert response.status == 200
                await response.read()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return count / (time.perf_counter() - started)


def in_process(cluster_file: Path, config_file: Path, nodes: int, count: int) -> list[float]:
    from limitguard.cli.configfile import load_config
    from limitguard.extender import extender_config_from_mapping
    from limitguard.extender.protocol import decode_extender_args
    from limitguard.extender.service import Extender
    from limitguard.kube.filefeed import load_cluster_file
    from limitguard.state.store import ClusterState

    state = ClusterState()
    load_cluster_file(state, cluster_file)
    extender = Extender(state, load_config(config_file), extender_config_from_mapping(EXTENDER_CONFIG))
    args = decode_extender_args(body(nodes))
    extender.prioritize(args)  # the first call copies every row of the freshly loaded state into the table
    timings = []
    for _ in range(count):
        started = time.perf_counter()
        extender.prioritize(args)
        timings.append(time.perf_counter() - started)
    return timings


def in_process_preempt(cluster_file: Path, config_file: Path, payload: bytes, count: int) -> list[float]:
    from limitguard.cli.configfile import load_config
    from limitguard.extender.preempt import Preemption
    from limitguard.extender.victims import decode_preemption_args
    from limitguard.kube.filefeed import load_cluster_file
    from limitguard.state.store import ClusterState

    state = ClusterState()
    load_cluster_file(state, cluster_file)
    preemption = Preemption(state, load_config(config_file))
    args = decode_preemption_args(payload)
    timings = []
    for _ in range(count):
        started = time.perf_counter()
        preemption.preempt(args)
        timings.append(time.perf_counter() - started)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=200, help="sequential prioritize calls per endpoint")
    parser.add_argument("--filter-requests", type=int, default=400)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--preempt-candidates", type=int, help="nodes per preempt call (default: max(10%%, 100))"
    )
    parser.add_argument("--victims", type=int, default=2, help="victims per candidate node")
    parser.add_argument("--preempt-requests", type=int, default=100)
    parser.add_argument(
        "--serve", nargs=4, metavar=("CLUSTER", "CONFIG", "CERTS", "PORT"), help=argparse.SUPPRESS
    )
    options = parser.parse_args()
    if options.serve:
        cluster, config, cert_dir, port = options.serve
        serve(cluster, config, cert_dir, int(port))
        return

    if options.preempt_candidates is None:  # DefaultPreemption's minCandidateNodes: 10%, at least 100
        options.preempt_candidates = min(options.nodes, max(options.nodes // 10, 100))
    work = Path(tempfile.mkdtemp(prefix="limitguard-extender-bench-"))
    cluster_file, config_file = work / "cluster.json", work / "config.yaml"
    cluster_file.write_bytes(orjson.dumps(make_cluster(options.nodes, options.pods, pending=0)))
    config_file.write_text(CONFIG)
    certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.extender",
            "--serve",
            str(cluster_file),
            str(config_file),
            str(work / "certs"),
            str(port),
        ],
        stdout=subprocess.PIPE,
        cwd=REPO,
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == b"ready"
        asyncio.run(drive(options, port, work))
    finally:
        stop(server)
    timings = in_process(cluster_file, config_file, options.nodes, 50)
    print(
        f"in-process Extender.prioritize, {options.nodes} candidates: p50 {percentile_ms(timings, 0.5):.1f} ms, "
        f"p99 {percentile_ms(timings, 0.99):.1f} ms"
    )
    payload = preempt_body(options.nodes, options.preempt_candidates, options.victims)
    timings = in_process_preempt(cluster_file, config_file, payload, 20)
    print(
        f"in-process Preemption.preempt, {options.preempt_candidates} candidates x {options.victims} victims "
        f"over {options.pods} pods: p50 {percentile_ms(timings, 0.5):.1f} ms, p99 {percentile_ms(timings, 0.99):.1f} ms"
    )


async def drive(options: argparse.Namespace, port: int, work: Path) -> None:
    context = ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
    base = f"https://localhost:{port}"
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=context, limit=options.workers)
    ) as session:
        for _ in range(50):  # wait for the listener
            try:
                async with session.get(base + "/healthz") as response:
                    if response.status == 200:
                        break
            except aiohttp.ClientError:
                await asyncio.sleep(0.2)
        payload = body(options.nodes)
        await sequential(session, base + "/extender/prioritize", payload, 5)  # warm up
        print(
            f"cluster: {options.nodes} nodes, {options.pods} pods; candidates per call: {options.nodes} (nodenames)"
        )
        print(f"{'endpoint':34} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for name, path in (
            ("prioritize (4 scorers)", "/extender/prioritize"),
            ("no-op baseline (decode only)", "/noop/prioritize"),
        ):
            latencies = await sequential(session, base + path, payload, options.requests)
            print(
                f"{name:34} {percentile_ms(latencies, 0.5):8.1f} {percentile_ms(latencies, 0.99):8.1f} "
                f"{max(latencies) * 1000:8.1f}"
            )
        print(
            f"\nfilter throughput, {options.workers} concurrent clients, {options.nodes} candidates per call"
        )
        for name, path in (("filter", "/extender/filter"), ("no-op baseline", "/noop/filter")):
            rate = await throughput(session, base + path, payload, options.filter_requests, options.workers)
            print(f"{name:34} {rate:8.1f} req/s  ({rate * options.nodes / 1e6:.2f} M nodes/s)")
        await preempt_scenario(session, base, options)


async def preempt_scenario(session: aiohttp.ClientSession, base: str, options: argparse.Namespace) -> None:
    candidates, victims = options.preempt_candidates, options.victims
    payload = preempt_body(options.nodes, candidates, victims)
    async with session.post(
        base + "/extender/preempt", data=payload, headers={"Content-Type": "application/json"}
    ) as response:
        kept = orjson.loads(await response.read())["nodeNameToMetaVictims"]
    print(
        f"\npreempt, {candidates} candidate nodes x {victims} victims by UID ({len(payload) / 1024:.0f} KiB): "
        f"{len(kept)} kept, {candidates - len(kept)} left out"
    )
    print(f"{'endpoint':34} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, path in (("preempt", "/extender/preempt"), ("no-op baseline (decode only)", "/noop/preempt")):
        latencies = await sequential(session, base + path, payload, options.preempt_requests)
        print(
            f"{name:34} {percentile_ms(latencies, 0.5):8.1f} {percentile_ms(latencies, 0.99):8.1f} "
            f"{max(latencies) * 1000:8.1f}"
        )


if __name__ == "__main__":
    main()
