"""Live-feed benchmark: initial sync and watch-event throughput against the fake API server.

The fake API server (limitguard.testing.fakeapi) runs as a subprocess holding the synthetic cluster, so
the RSS printed here is limitguard's alone. Figures, each with a baseline measured in the same run:

1. initial sync of every node, pod and namespace through limitguard's reflectors until /readyz
   would say ok; baseline = the same paged GETs with orjson.loads and no state work.
2. a burst of pod MODIFIED events applied while admissions are answered on the same event loop:
   events/s applied and admission latency percentiles during the burst; baselines = the same 10,000
   events replayed to a bare reader (read + orjson.loads), and admission latency with no burst.
   This is the figure behind tests/live/test_live_admission.py's burst test, which asserts only
   ordering (an admission answered with the cache half-way through a held burst): latency depends
   on the machine, so it is measured here, next to its idle baseline, and never asserted.

    python -m bench.sync                              # 5,000 nodes, 150,000 pods, burst 10,000
    python -m bench.sync --nodes 200 --pods 5000 --burst 2000   # quick
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from bench.harness import REPO, percentile_ms, start_fake_apiserver
from limitguard.admission.validating import Validator
from limitguard.core.configread import config_from_mapping
from limitguard.http.app import Services, create_app
from limitguard.http.metrics import Metrics
from limitguard.kube.livefeed import ACTIVE_PODS_SELECTOR, start_live_feed
from limitguard.state.store import ClusterState
from limitguard.testing.builders import binding
from limitguard.testing.kubeconfig import write_kubeconfig

TOKEN = "bench-token"
PATHS = {"nodes": "/api/v1/nodes", "pods": "/api/v1/pods", "namespaces": "/api/v1/namespaces"}
CONFIG = config_from_mapping(
    {"limitAware": {"defaultLimitToAllocatableRatio": {"cpu": 150, "memory": "150%"}}}
)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def wait_for(condition, interval: float = 0.001) -> float:  # type: ignore[no-untyped-def]
    while not condition():
        await asyncio.sleep(interval)
    return time.perf_counter()


async def baseline_list(url: str, page_size: int) -> tuple[float, int]:
    """Paged GETs of every kind, parsed and dropped: the floor any sync pays."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    started, objects = time.perf_counter(), 0
    async with aiohttp.ClientSession(headers=headers) as session:
        for kind, path in PATHS.items():
            token = ""
            while True:
                params = {"limit": str(page_size)}
                if kind == "pods":
                    params["fieldSelector"] = ACTIVE_PODS_SELECTOR
                if token:
                    params["continue"] = token
                async with session.get(url + path, params=params) as response:
                    page = orjson.loads(await response.read())
                objects += len(page["items"])
                token = page["metadata"].get("continue", "")
                if not token:
                    break
    return time.perf_counter() - started, objects


async def baseline_watch(url: str, since: str, until: int) -> float:
    """Replay the burst's events to a bare reader (split lines, orjson.loads): events/s floor."""
    params = {"watch": "true", "resourceVersion": since, "fieldSelector": ACTIVE_PODS_SELECTOR}
    count, started, partial = 0, time.perf_counter(), b""
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session,
        session.get(url + PATHS["pods"], params=params) as response,
    ):
        async for chunk in response.content.iter_any():
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            for line in lines:
                event = orjson.loads(line)
                count += 1
                if int(event["object"]["metadata"]["resourceVersion"]) >= until:
                    return count / (time.perf_counter() - started)
    raise RuntimeError("the replay ended before the last burst event")


async def paced_admissions(url: str, body_file: Path, rate: float, while_running: Any) -> list[float]:
    """Admissions at *rate*/s from a separate process (bench/paced_client.py, run as `python -m bench.paced_client`) while *while_running*
    runs here; returns their latencies."""
    client = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.paced_client",
        "--url",
        url,
        "--body",
        str(body_file),
        "--rate",
        str(rate),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    await asyncio.sleep(0.3)  # let it connect
    await while_running
    assert client.stdin is not None
    client.stdin.close()
    out, _ = await client.communicate()
    return orjson.loads(out)


def binding_review(namespace: str, name: str, uid: str, node: str) -> bytes:
    review = binding(name, node, namespace=namespace, uid="bench", pod_uid=uid, dry_run=True)
    review["request"]["userInfo"] = {"username": "system:kube-scheduler"}
    return orjson.dumps(review)  # dry run keeps the ledger out of it: every request does the same work


async def run(args: argparse.Namespace) -> None:
    rss_start = peak_rss_mb()
    print(f"starting the fake API server with {args.nodes} nodes and {args.pods} pods ...", flush=True)
    server, url = await asyncio.to_thread(start_fake_apiserver, args.nodes, args.pods, TOKEN)
    try:
        with tempfile.TemporaryDirectory() as work:
            kubeconfig = write_kubeconfig(Path(work), url, token=TOKEN)

            # 1. initial sync ------------------------------------------------------------------
            state = ClusterState()
            started = time.perf_counter()
            feed = await start_live_feed(state, kubeconfig)
            synced = await wait_for(lambda: state.ready, 0.01)
            sync_seconds = synced - started
            rss_synced = peak_rss_mb()
            counts = state.counts()
            base_seconds, base_objects = await baseline_list(url, 500)
            assert base_objects == sum(counts.values()), (base_objects, counts)

            # 2. burst while serving admissions ---------------------------------------------------
            metrics = Metrics(state, CONFIG)
            feed.metrics = metrics
            app = create_app(Services(state, CONFIG, {"validate": Validator(state, CONFIG)}, metrics))
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            admit_url = f"http://127.0.0.1:{runner.addresses[0][1]}/validate"
            pod = next(iter(state.pods()))
            other_node = next(node.name for node in state.nodes() if node.name != pod.node_name)
            review = binding_review(pod.namespace, pod.name, pod.uid, other_node)

            body_file = Path(work) / "review.json"
            body_file.write_bytes(review)

            async def burst_events_per_second() -> tuple[float, int, int]:
                """Apply one burst; (events/s, resourceVersion before, last resourceVersion)."""
                pods = feed.reflectors["pods"]
                before = int(pods.resource_version)
                async with aiohttp.ClientSession() as session:
                    burst = asyncio.create_task(
                        session.post(f"{url}/_fake/burst", params={"count": str(args.burst)})
                    )
                    first = await wait_for(lambda: int(pods.resource_version) > before)
                    answer = await burst
                    last_rv = (await answer.json())["rv"]
                done = await wait_for(lambda: int(pods.resource_version) >= last_rv)
                return args.burst / (done - first), before, last_rv

            # a) the feed alone
            alone_events_per_second, _, _ = await burst_events_per_second()
            # b) idle admission latency, then a burst while admissions arrive from another process
            idle = await paced_admissions(admit_url, body_file, args.rate, asyncio.sleep(args.idle_seconds))
            holder: list[tuple[float, int, int]] = []

            async def measured_burst() -> None:
                holder.append(await burst_events_per_second())

            during = await paced_admissions(admit_url, body_file, args.rate, measured_burst())
            events_per_second, before, last_rv = holder[0]
            applied = metrics.registry.get_sample_value(
                "limitguard_watch_events_total", {"kind": "pods", "type": "MODIFIED"}
            )
            floor_events_per_second = await baseline_watch(url, str(before), last_rv)
            await feed.stop()
            await runner.cleanup()
    finally:
        server.terminate()
        server.wait()

    print(f"\nstate: {counts}")
    print(
        f"initial sync: {sync_seconds:.2f} s (baseline paged GET + orjson.loads, no state: {base_seconds:.2f} s; "
        f"ratio {sync_seconds / base_seconds:.2f}x)"
    )
    print(
        f"peak RSS: {rss_synced:.0f} MB after the sync (interpreter and imports: {rss_start:.0f} MB); "
        f"{peak_rss_mb():.0f} MB at the end"
    )
    print(
        f"burst of {args.burst} pod MODIFIED events, no admissions: {alone_events_per_second:,.0f} events/s applied"
    )
    print(
        f"burst of {args.burst} pod MODIFIED events with {args.rate:g} admissions/s from another process: "
        f"{events_per_second:,.0f} events/s applied "
        f"(bare reader on the same events: {floor_events_per_second:,.0f} events/s; "
        f"ratio {events_per_second / floor_events_per_second:.2f}); counted {applied:.0f}"
    )
    print(
        f"admission latency during the burst: n={len(during)} p50 {percentile_ms(during, 0.5):.2f} ms "
        f"p99 {percentile_ms(during, 0.99):.2f} ms max {max(during) * 1000:.2f} ms"
    )
    print(
        f"admission latency idle:             n={len(idle)} p50 {percentile_ms(idle, 0.5):.2f} ms "
        f"p99 {percentile_ms(idle, 0.99):.2f} ms max {max(idle) * 1000:.2f} ms"
    )
    verdict = [
        f"sync < 30 s: {'yes' if sync_seconds < 30 else 'NO'}",
        f"RSS < 600 MB: {'yes' if rss_synced < 600 else 'NO'}",
        f">= 20,000 events/s: {'yes' if events_per_second >= 20_000 else 'NO'}",
    ]
    print("targets: " + "; ".join(verdict))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--burst", type=int, default=10_000)
    parser.add_argument("--idle-seconds", type=float, default=2.0)
    parser.add_argument("--rate", type=float, default=200, help="admissions per second during the burst")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
