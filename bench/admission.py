"""Admission benchmark: limitguard over TLS against a bare-handler floor, in one run.

Builds a synthetic cluster (default 5,000 nodes, 150,000 pods), starts `limitguard serve` and the
floor server (bench/floor_server.py) as subprocesses with the same certificates, and drives both
with the same keep-alive HTTPS client. Prints requests/s and latency percentiles per scenario,
the ratio to the floor, and the state-load time and peak RSS of the server.

    python -m bench.admission                 # full size
    python -m bench.admission --nodes 500 --pods 15000 --requests 2000   # quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import ssl
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson

from bench.harness import peak_rss_mb, percentile_ms, serve_command, start, start_floor, stop
from bench.state_load import measure_state_load
from bench.synthetic import ZONES, write_cluster
from limitguard.certs import generate as certs
from limitguard.testing.builders import binding

CONFIG = """apiVersion: limitguard.io/v1alpha1
kind: LimitGuardConfiguration
limitAware:
  defaultLimitToAllocatableRatio: {cpu: 150, memory: "150%"}
  enforcement: Deny
  unboundPods: Warn
excludedNamespaces: [kube-system]
# The synthetic namespaces carry no opt-in label: every best-effort pod is defaulted, as before.
bestEffortDefaults: {requireNamespaceLabel: false}
"""


@dataclass
class Result:
    name: str
    requests: int
    seconds: float
    latencies: list[float]
    errors: int
    denied: int
    concurrency: int = 0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    def percentile(self, fraction: float) -> float:
        return percentile_ms(self.latencies, fraction)

    def row(self, floor: Result | None) -> str:
        ratio = f"{self.rps / floor.rps:6.0%}" if floor else "     -"
        return (
            f"{self.name:<28} {self.concurrency:>4} {self.requests:>7} {self.rps:>9.0f} {ratio} {self.percentile(0.5):>8.2f} "
            f"{self.percentile(0.95):>8.2f} {self.percentile(0.99):>8.2f} {self.errors:>6} {self.denied:>7}"
        )


HEADER = (
    f"{'scenario':<28} {'conc':>4} {'reqs':>7} {'req/s':>9} {'floor':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
    f"{'errors':>6} {'denied':>7}"
)


def review(request: dict) -> bytes:
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


SCHEDULER_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      score:
        enabled:
          - {name: NodeResourcesFitPlus, weight: 2}
          - {name: ScarceResourceAvoidance, weight: 2}
    pluginConfig:
      - name: NodeResourcesFitPlus
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: ResourceTypesArgs
          resources:
            nvidia.com/gpu: {type: MostAllocated, weight: 2}
            cpu: {type: LeastAllocated, weight: 1}
            memory: {type: LeastAllocated, weight: 1}
      - name: ScarceResourceAvoidance
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: ScarceResourceAvoidanceArgs
          resources: [nvidia.com/gpu]
"""


def configmap_body(index: int) -> bytes:
    return review(
        {
            "uid": f"c-{index}",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "namespace": "kube-system",
            "name": "scheduler-config",
            "operation": "UPDATE",
            "dryRun": False,
            "object": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "scheduler-config", "namespace": "kube-system"},
                "data": {"scheduler-config.yaml": SCHEDULER_CONFIG},
            },
        }
    )


def binding_body(index: int, pod: str, namespace: str, node: str) -> bytes:
    return orjson.dumps(binding(pod, node, namespace=namespace, uid=f"b-{index}"))


def pod_body(index: int, limits: dict | None, node_selector: dict | None = None) -> bytes:
    spec: dict = {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"limits": limits} if limits else {},
            }
        ]
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    return review(
        {
            "uid": f"p-{index}",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "ns-1",
            "name": f"new-{index}",
            "operation": "CREATE",
            "dryRun": False,
            "object": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"new-{index}", "namespace": "ns-1"},
                "spec": spec,
            },
        }
    )


async def drive(
    name: str, url: str, bodies: list[bytes], concurrency: int, context: ssl.SSLContext
) -> Result:
    latencies: list[float] = []
    errors = denied = 0
    cursor = 0
    connector = aiohttp.TCPConnector(ssl=context, limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal cursor, errors, denied
            while cursor < len(bodies):
                body = bodies[cursor]
                cursor += 1
                started = time.perf_counter()
                try:
                    async with session.post(
                        url, data=body, headers={"Content-Type": "application/json"}
                    ) as r:
                        payload = await r.read()
                        if r.status != 200:
                            errors += 1
                        elif b'"allowed":false' in payload:
                            denied += 1
                except aiohttp.ClientError:
                    errors += 1
                latencies.append(time.perf_counter() - started)

        # Warm the connections up outside the measurement.
        warm = bodies[: concurrency * 2]
        await asyncio.gather(
            *(session.post(url, data=b, headers={"Content-Type": "application/json"}) for b in warm)
        )
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
    return Result(name, len(bodies), seconds, latencies, errors, denied)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=10_000, help="requests per scenario")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--port", type=int, default=18443, help="limitguard's port; the floor takes the next")
    args = parser.parse_args()

    rng = random.Random(11)
    work = Path(tempfile.mkdtemp(prefix="limitguard-bench-"))
    cluster_file = work / "cluster.json"
    pending = write_cluster(cluster_file, args.nodes, args.pods, args.pending)
    (work / "config.yaml").write_text(CONFIG)
    certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
    context = ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
    print(
        f"cluster: {args.nodes} nodes, {args.pods} pods ({args.pending} pending), file {cluster_file.stat().st_size / 1e6:.0f} MB"
    )

    load = measure_state_load(cluster_file)
    print(
        f"state load: {load['state_seconds']:.2f} s, peak RSS {load['state_rss_mb']:.0f} MB "
        f"(baseline: orjson parse of the whole file, no state: {load['parse_seconds']:.2f} s, "
        f"{load['parse_rss_mb']:.0f} MB)"
    )

    port, floor_port = args.port, args.port + 1
    server = start(
        serve_command(
            *("--config", str(work / "config.yaml"), "--cluster", str(cluster_file)),
            *("--cert-dir", str(work / "certs")),
            port=port,
        ),
        f"https://localhost:{port}/readyz",
        context,
        timeout=300,
    )
    floor = start_floor(work / "certs", floor_port, context)
    server_rss_loaded = peak_rss_mb(server.pid)
    node_names = [f"node-{index:05d}" for index in range(args.nodes)]
    n = args.requests
    scan = lambda i: pod_body(  # noqa: E731
        i, {"cpu": "20", "memory": "1Gi"}, {"topology.kubernetes.io/zone": rng.choice(ZONES)}
    )
    # (name, body maker, concurrency, requests)
    scenarios: list[tuple[str, Callable[[int], bytes], int, int]] = [
        (
            "binding check",
            lambda i: binding_body(
                i,
                pending[i % len(pending)]["name"],
                pending[i % len(pending)]["namespace"],
                rng.choice(node_names),
            ),
            args.concurrency,
            n,
        ),
        ("unbound pod (fits)", lambda i: pod_body(i, {"cpu": "1", "memory": "1Gi"}), args.concurrency, n),
        ("unbound pod (no room, scan)", scan, args.concurrency, n),
        ("unbound pod (no room, scan)", scan, 1, max(n // 5, 100)),
        ("mutate best-effort pod", lambda i: pod_body(i, None), args.concurrency, n),
        ("ConfigMap validation", configmap_body, args.concurrency, n),
    ]
    results: list[tuple[Result, Result]] = []
    try:
        for name, make, concurrency, count in scenarios:
            bodies = [make(i) for i in range(count)]
            path = "/mutate" if name.startswith("mutate") else "/validate"
            floor_url = f"https://localhost:{floor_port}{path}"
            floor_result = asyncio.run(drive("  floor", floor_url, bodies, concurrency, context))
            result = asyncio.run(drive(name, f"https://localhost:{port}{path}", bodies, concurrency, context))
            result.concurrency = floor_result.concurrency = concurrency
            results.append((result, floor_result))
        server_rss_end = peak_rss_mb(server.pid)
    finally:
        stop(server, floor)

    print("\nkeep-alive HTTPS (TLS 1.3); client and servers on one 2-core machine")
    print(HEADER)
    for result, floor_result in results:
        print(result.row(floor_result))
        print(floor_result.row(None))
    print(f"\nserver peak RSS: {server_rss_loaded:.0f} MB after load, {server_rss_end:.0f} MB after the run")
    if args.json:
        figures = {
            "load": load,
            "server_rss_mb": server_rss_end,
            "scenarios": {
                f"{r.name} x{r.concurrency}": {
                    "rps": r.rps,
                    "p50_ms": r.percentile(0.5),
                    "p95_ms": r.percentile(0.95),
                    "p99_ms": r.percentile(0.99),
                    "errors": r.errors,
                    "denied": r.denied,
                    "floor_rps": f.rps,
                    "ratio": r.rps / f.rps,
                }
                for r, f in results
            },
        }
        Path(args.json).write_text(json.dumps(figures, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
