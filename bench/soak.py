"""Soak: minutes of mixed admissions and watch events against the real `limitguard serve`.

Three processes: the fake API server (limitguard.testing.fakeapi) with a synthetic cluster, limitguard
serving over TLS and list/watching it, and this driver. Every second the driver asks the fake
server for a burst of pod MODIFIED events and sends a mix of binding checks, unbound-pod checks,
mutations and ConfigMap validations. Each minute it prints requests, errors, p50/p99 latency,
limitguard's RSS and open file descriptors, and events applied; the first minute is the baseline
the others are compared with.

    python -m bench.soak                     # 10 minutes, 1,000 nodes, 30,000 pods
    python -m bench.soak --minutes 1 --nodes 200 --pods 5000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import ssl
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.admission import CONFIG, binding_body, configmap_body, pod_body
from bench.harness import percentile_ms, serve_command, start, start_fake_apiserver, stop
from limitguard.certs import generate as certs
from limitguard.testing.kubeconfig import write_kubeconfig

TOKEN = "soak-token"


def process_figures(pid: int) -> tuple[float, int]:
    """Current RSS in MB and open file descriptors of *pid*."""
    rss = next(
        int(line.split()[1]) / 1024
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmRSS:")
    )
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


async def events_applied(session: aiohttp.ClientSession, url: str) -> int:
    async with session.get(url + "/metrics") as response:
        text = await response.text()
    return int(
        sum(
            float(value)
            for value in re.findall(r'^limitguard_watch_events_total\{kind="pods".*\} (\S+)$', text, re.M)
        )
    )


async def burst(api: aiohttp.ClientSession, api_url: str, count: int) -> None:
    async with api.post(f"{api_url}/_fake/burst?count={count}") as response:
        await response.read()


async def admit(
    session: aiohttp.ClientSession,
    url: str,
    makers: list,
    index: int,
    latencies: list[float],
    failures: list[int],
) -> None:
    kind = index % len(makers)
    path = "/mutate" if kind == 2 else "/validate"
    started = time.perf_counter()
    try:
        async with session.post(
            url + path, data=makers[kind](index), headers={"Content-Type": "application/json"}
        ) as r:
            await r.read()
            if r.status != 200:
                failures.append(r.status)
    except aiohttp.ClientError:
        failures.append(0)
    latencies.append(time.perf_counter() - started)


async def soak(
    args: argparse.Namespace, url: str, api_url: str, context: ssl.SSLContext, pid: int
) -> list[dict]:
    rng = random.Random(3)
    nodes = [f"node-{index:05d}" for index in range(args.nodes)]
    makers = [
        lambda i: binding_body(
            i, f"app-{rng.randrange(args.pods):06d}", f"ns-{rng.randrange(50)}", rng.choice(nodes)
        ),
        lambda i: pod_body(i, {"cpu": "500m", "memory": "512Mi"}),
        lambda i: pod_body(i, None),
        configmap_body,
    ]
    rows: list[dict] = []
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=context, limit=args.concurrency)
    ) as session:
        api = aiohttp.ClientSession()
        try:
            for minute in range(args.minutes):
                latencies: list[float] = []
                failures: list[int] = []
                events_before = await events_applied(session, url)
                began = time.monotonic()
                tasks: list[asyncio.Task[None]] = []
                total = 60 * args.requests_per_second
                for index in range(total):  # paced arrivals, like an apiserver's steady stream
                    due = began + index / args.requests_per_second
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    if index % args.requests_per_second == 0:
                        tasks.append(asyncio.create_task(burst(api, api_url, args.events_per_second)))
                    tasks.append(asyncio.create_task(admit(session, url, makers, index, latencies, failures)))
                await asyncio.gather(*tasks)
                errors = len(failures)
                rss, fds = process_figures(pid)
                events = await events_applied(session, url) - events_before
                row = {
                    "minute": minute + 1,
                    "requests": len(latencies),
                    "errors": errors,
                    "p50": percentile_ms(latencies, 0.5),
                    "p99": percentile_ms(latencies, 0.99),
                    "rss": rss,
                    "fds": fds,
                    "events": events,
                }
                rows.append(row)
                print(
                    f"{row['minute']:>6} {row['requests']:>9} {row['errors']:>6} {row['p50']:>8.2f} {row['p99']:>8.2f} "
                    f"{row['rss']:>8.0f} {row['fds']:>5} {row['events']:>9}",
                    flush=True,
                )
        finally:
            await api.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30_000)
    parser.add_argument("--requests-per-second", type=int, default=200)
    parser.add_argument("--events-per-second", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--port", type=int, default=18460)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="limitguard-soak-"))
    api, api_url = start_fake_apiserver(args.nodes, args.pods, TOKEN)
    server = None
    try:
        kubeconfig = write_kubeconfig(work, api_url, token=TOKEN)
        (work / "config.yaml").write_text(CONFIG)
        certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
        context = ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
        url = f"https://localhost:{args.port}"
        server = start(
            serve_command(
                *("--config", str(work / "config.yaml"), "--kubeconfig", kubeconfig),
                *("--cert-dir", str(work / "certs")),
                port=args.port,
            ),
            f"{url}/readyz",
            context,
            timeout=300,
        )
        print(
            f"soak: {args.minutes} min, {args.nodes} nodes, {args.pods} pods, {args.requests_per_second} "
            f"admissions/s (bindings, unbound pods, mutations, ConfigMaps), {args.events_per_second} pod events/s"
        )
        print(
            f"{'minute':>6} {'requests':>9} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8} {'RSS MB':>8} {'fds':>5} {'events':>9}"
        )
        rows = asyncio.run(soak(args, url, api_url, context, server.pid))
    finally:
        stop(server, api)
        shutil.rmtree(work, ignore_errors=True)
    first, last = rows[0], rows[-1]
    print(
        f"\nstart -> end: RSS {first['rss']:.0f} -> {last['rss']:.0f} MB, fds {first['fds']} -> {last['fds']}, "
        f"p99 {first['p99']:.2f} -> {last['p99']:.2f} ms, errors {sum(row['errors'] for row in rows)}"
    )


if __name__ == "__main__":
    main()
