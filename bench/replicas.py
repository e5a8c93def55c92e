"""Binding throughput through a follower vs directly on the leader, and their ratio: medians of --rounds.

Three processes besides this one: the fake API server (limitguard.testing.fakeapi, with Leases) holding
a synthetic cluster, and two `limitguard serve` replicas in live mode with the chart's Downward API
identity, which elect a leader through the Lease. The same keep-alive HTTPS client sends the same
binding reviews (each to a node other than the pod's, so every one is checked and recorded in the
leader's ledger) alternately to the leader and to the follower, in rounds, so drift in machine load
hits both sides alike. The follower forwards each one to the leader over HTTPS and relays the answer.

    python -m bench.replicas                        # defaults
    python -m bench.replicas --requests 4000 --concurrency 32
    python -m bench.replicas --faults               # recovery times instead of throughput

With --faults: first a forged pod creation (spec.nodeName, a DaemonSet owner, a limit no node can
hold) is sent, and the time until a dry-run binding to that node is allowed again is measured (the
apiserver never writes the forged pod, so its ledger entry must go); then the fake apiserver is
stopped (SIGSTOP) for --outage seconds and continued, then the leader is frozen (SIGSTOP) until the
other replica decides, then the leader is killed (SIGKILL); for each, the time until a binding sent
to a live replica is decided again (allowed: under noLeaderPolicy Deny nothing else is), probing
every 0.1 s, from the apiserver's return, the freeze and the kill. The frozen leader is continued
with --queued bindings already waiting on its socket: it must decide none of them itself (its lease
is stale), only forward them to the new leader or refuse them. From the apiserver's return, --waves
bursts one second apart each send --burst concurrent bindings of fresh pending pods into a fresh node
with room for 8 (alternately through both replicas), and the admitted count of each is printed
(--policy Deny or Local: the replicas' noLeaderPolicy).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import ssl
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from bench.harness import stop
from bench.replicaset import (
    binding_body,
    forward_counts,
    metric,
    metric_labelled,
    post_review,
    start_fake_apiserver,
    start_replica,
    wait_for_leader,
    wait_ready,
)
from bench.tables import median_row, median_table
from limitguard.certs import generate as certs
from limitguard.testing.builders import binding, make_pod, pod_create
from limitguard.testing.kubeconfig import write_kubeconfig

TOKEN = "bench-token"
CONFIG = """apiVersion: limitguard.io/v1alpha1
kind: LimitGuardConfiguration
limitAware:
  defaultLimitToAllocatableRatio: {{cpu: 100000}}
excludedNamespaces: []
replicas: {{noLeaderPolicy: {policy}}}
"""
ROOM = 8  # pods of 1 cpu that fit on a room-NNN node of the fake apiserver (8 cpu, ratio 100 %)


async def drive(session: aiohttp.ClientSession, url: str, bodies: list[bytes], concurrency: int) -> float:
    """Send every body with *concurrency* requests in flight; returns the elapsed seconds."""
    queue = iter(bodies)
    allowed = 0

    async def worker() -> None:
        nonlocal allowed
        for body in queue:
            async with session.post(
                url + "/validate", data=body, headers={"Content-Type": "application/json"}
            ) as response:
                answer = orjson.loads(await response.read())
                allowed += answer["response"]["allowed"]

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    assert allowed == len(bodies), f"only {allowed} of {len(bodies)} allowed: the bench measures decisions"
    return elapsed


async def decided_after(
    session: aiohttp.ClientSession, urls: list[str], started: float, first: int, args: argparse.Namespace
) -> float:
    """Seconds from *started* until one of *urls* decides a binding (allowed, no warning)."""
    index = first
    while time.monotonic() < started + 180:
        for url in urls:
            index += 1
            body = binding_body(index, args.pods, args.nodes)
            try:
                async with session.post(
                    url + "/validate",
                    data=body,
                    headers={"Content-Type": "application/json"},
                    timeout=aiohttp.ClientTimeout(total=3),
                ) as response:
                    answer = orjson.loads(await response.read())["response"]
                if answer["allowed"] and not answer.get("warnings"):
                    return time.monotonic() - started
            except (aiohttp.ClientError, TimeoutError, KeyError, orjson.JSONDecodeError):
                pass
        await asyncio.sleep(0.1)
    raise SystemExit("no decision within 180 s")


async def leading_after(
    session: aiohttp.ClientSession, urls: list[str], started: float, first: int, args: argparse.Namespace
) -> float:
    """Seconds from *started* until one of *urls* decides as the leader. Under noLeaderPolicy Deny a
    decided binding shows it; under Local every replica decides alone meanwhile, so the leader's
    gauge (limitguard_leader_deciding) is read instead."""
    if args.policy == "Deny":
        return await decided_after(session, urls, started, first, args)
    while time.monotonic() < started + 180:
        for url in urls:
            try:
                if await metric(session, url, "limitguard_leader_deciding") == 1.0:
                    return time.monotonic() - started
            except aiohttp.ClientError:
                pass
        await asyncio.sleep(0.1)
    raise SystemExit("no deciding leader within 180 s")


async def forged_hold(session: aiohttp.ClientSession, url: str, args: argparse.Namespace) -> float:
    """Seconds from a forged pod creation's answer until the room it held is free again."""
    node = f"node-{1 % args.nodes:05d}"
    forged = make_pod("ns-0", "forged", node, cpu_limit="100000000", phase="Pending")
    forged["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "x", "uid": "x", "controller": True}
    ]
    probe = orjson.dumps(binding("app-000000", node, namespace="ns-0", uid="probe", dry_run=True))

    async def post(body: bytes) -> dict:
        headers = {"Content-Type": "application/json"}
        async with session.post(url + "/validate", data=body, headers=headers) as response:
            return orjson.loads(await response.read())["response"]

    assert (await post(orjson.dumps(pod_create(forged, uid="forged"))))["allowed"]
    answered = time.monotonic()
    assert not (await post(probe))["allowed"], "the forged entry should hold the node's room"
    while time.monotonic() < answered + 120:
        if (await post(probe))["allowed"]:
            return time.monotonic() - answered
        await asyncio.sleep(0.1)
    raise SystemExit("the forged entry was never released")


async def faults(
    session: aiohttp.ClientSession,
    urls: list[str],
    leader: int,
    api: subprocess.Popen[str],
    replicas: list[subprocess.Popen[bytes]],
    args: argparse.Namespace,
) -> None:
    held = await forged_hold(session, urls[leader], args)
    print(f"forged pod creation: its room held for {held:.1f} s (write horizon 10 s)")
    api.send_signal(signal.SIGSTOP)
    await asyncio.sleep(args.outage)
    api.send_signal(signal.SIGCONT)
    returned = time.monotonic()
    back, waves = await asyncio.gather(
        leading_after(session, urls, returned, 10_000, args), bursts(session, urls, returned, args)
    )
    print(f"apiserver stopped {args.outage:.0f} s: a binding decided {back:.1f} s after it continued")
    print(
        f"bursts of {args.burst} bindings into room for {ROOM} (noLeaderPolicy {args.policy}), through both:"
    )
    for started, admitted in waves:
        print(f"  +{started:4.1f} s  admitted {admitted:2d}" + ("  OVER ROOM" if admitted > ROOM else ""))
    exact = [started for started, admitted in waves if admitted == ROOM]
    steady = next((s for s, _ in waves if all(a == ROOM for t, a in waves if t >= s)), None)
    print(
        f"first wave with exactly its room: +{exact[0]:.1f} s; every wave from +{steady:.1f} s"
        if exact and steady is not None
        else "no wave got exactly its room"
    )
    leader = await wait_for_leader(session, urls, time.monotonic() + 120)
    await asyncio.sleep(args.settle)  # renewed a few times: the stop lands mid-lease
    await frozen_leader(session, urls, leader, replicas[leader], args)
    leader = await wait_for_leader(session, urls, time.monotonic() + 120)
    await asyncio.sleep(args.settle)  # renewed a few times: the kill lands mid-lease
    replicas[leader].kill()
    killed = time.monotonic()
    took = await leading_after(session, [urls[1 - leader]], killed, 20_000, args)
    how = await metric_labelled(session, urls[1 - leader], "limitguard_leader_catch_ups_total")
    print(f"leader SIGKILLed: the other replica decided {took:.1f} s later (catch-ups: {how})")


async def bursts(
    session: aiohttp.ClientSession, urls: list[str], returned: float, args: argparse.Namespace
) -> list[tuple[float, int]]:
    """Every second from the apiserver's return, --burst concurrent bindings of fresh pending pods
    into a fresh node with room for ROOM, alternately through each replica; (start, admitted) each."""

    async def wave(index: int) -> tuple[float, int]:
        await asyncio.sleep(max(0.0, returned + index - time.monotonic()))
        started = time.monotonic() - returned
        bodies = [
            orjson.dumps(
                binding(
                    f"wave-{index:03d}-{pod:02d}",
                    f"room-{index:03d}",
                    namespace="ns-0",
                    uid=f"w{index}-{pod}",
                )
            )
            for pod in range(args.burst)
        ]
        answers = await asyncio.gather(
            *(post_review(session, urls[pod % len(urls)], body) for pod, body in enumerate(bodies)),
            return_exceptions=True,
        )
        admitted = sum(1 for a in answers if isinstance(a, dict) and a["allowed"] and not a.get("warnings"))
        return started, admitted

    return list(await asyncio.gather(*(wave(index) for index in range(args.waves))))


async def frozen_leader(
    session: aiohttp.ClientSession,
    urls: list[str],
    leader: int,
    process: subprocess.Popen[bytes],
    args: argparse.Namespace,
) -> None:
    """SIGSTOP the leader past its lease; time until the other replica decides; then SIGCONT it with
    bindings already queued on its socket and count how many it decided itself (must be none: its
    lease is stale, so each is forwarded to the new leader or refused)."""
    survivor = 1 - leader
    before = await forward_counts(session, urls[leader])
    process.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        took = await leading_after(session, [urls[survivor]], stopped, 30_000, args)
        print(f"leader SIGSTOPped: the other replica decided {took:.1f} s later")
        queued = [
            asyncio.create_task(
                post_review(session, urls[leader], binding_body(40_000 + i, args.pods, args.nodes))
            )
            for i in range(args.queued)
        ]
        await asyncio.sleep(0.5)  # the requests wait in the stopped process's socket buffers
    finally:
        process.send_signal(signal.SIGCONT)
    answers = await asyncio.gather(*queued, return_exceptions=True)
    after = await forward_counts(session, urls[leader])
    counts = {key: after[key] - before[key] for key in after}
    local = len(queued) - counts["forwarded"] - counts["no-leader"]
    refused = sum(1 for answer in answers if isinstance(answer, dict) and not answer["allowed"])
    deciding = [await metric(session, url, "limitguard_leader_deciding") for url in urls]
    print(
        f"old leader continued with {len(queued)} bindings queued: {counts['forwarded']:.0f} forwarded, "
        f"{counts['no-leader']:.0f} answered by noLeaderPolicy ({refused} refused), {local:.0f} decided "
        f"on the stale lease; deciding now (old, new): {deciding[leader]:.0f}, {deciding[survivor]:.0f}; "
        f"old leader's lost transitions: {counts['lost']:.0f}"
    )


async def run(args: argparse.Namespace) -> None:
    api, api_url = start_fake_apiserver(args.nodes, args.pods, TOKEN, args.waves, args.burst)
    replicas: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory)
        (home / "config.yaml").write_text(CONFIG.format(policy=args.policy))
        certs.write(certs.generate(["localhost", "127.0.0.1"]), home / "certs")
        kubeconfig = write_kubeconfig(home, api_url, token=TOKEN)
        ports = [args.base_port, args.base_port + 1]
        try:
            for index, port in enumerate(ports):
                replicas.append(start_replica(index, port, home, kubeconfig))
            urls = [f"https://127.0.0.1:{port}" for port in ports]
            context = ssl.create_default_context(cafile=str(home / "certs" / certs.CA_CERT))
            connector = aiohttp.TCPConnector(ssl=context, limit=args.concurrency * 2)
            async with aiohttp.ClientSession(connector=connector) as session:
                leader = await wait_for_leader(session, urls, time.monotonic() + 120)
                await wait_ready(session, urls, time.monotonic() + 120)
                if args.faults:
                    await faults(session, urls, leader, api, replicas, args)
                    return
                follower = 1 - leader
                bodies = [binding_body(i, args.pods, args.nodes) for i in range(args.requests)]
                await drive(
                    session, urls[leader], bodies[: args.concurrency * 10], args.concurrency
                )  # warm-up
                await drive(session, urls[follower], bodies[: args.concurrency * 10], args.concurrency)
                seconds: dict[str, list[float]] = {"leader": [], "follower": []}
                for _ in range(args.rounds):
                    seconds["leader"].append(await drive(session, urls[leader], bodies, args.concurrency))
                    seconds["follower"].append(await drive(session, urls[follower], bodies, args.concurrency))
                forwarded = await metric(session, urls[follower], "limitguard_forward_duration_seconds_count")
        finally:
            for process in replicas:
                process.terminate()
            stop(*replicas, api)  # the apiserver last: replicas that lose it mid-shutdown only log retries
    leader_rps = [args.requests / taken for taken in seconds["leader"]]
    follower_rps = [args.requests / taken for taken in seconds["follower"]]
    print(
        f"cluster: {args.nodes} nodes, {args.pods} pods; {args.rounds} rounds x {args.requests} bindings, "
        f"{args.concurrency} in flight; cpus: {os.cpu_count()}, load: {os.getloadavg()[0]:.1f}; "
        f"{forwarded:.0f} forwarded"
    )
    # Each round's leader and follower runs are back to back: their ratio is taken per round.
    rates = {"direct to the leader, bindings/s": leader_rps, "through a follower, bindings/s": follower_rps}
    print(median_table("python -m bench.replicas", rates))
    ratios = [follower / leader for follower, leader in zip(follower_rps, leader_rps, strict=True)]
    print(median_row("ratio follower/leader", ratios, digits=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--base-port", type=int, default=18443)
    parser.add_argument("--faults", action="store_true", help="measure recovery after faults instead")
    parser.add_argument("--outage", type=float, default=20.0, help="seconds the apiserver is stopped")
    parser.add_argument("--policy", choices=["Deny", "Local"], default="Deny", help="noLeaderPolicy")
    parser.add_argument(
        "--waves", type=int, default=12, help="bursts after the apiserver's return, 1 s apart"
    )
    parser.add_argument("--burst", type=int, default=12, help=f"bindings per burst (room for {ROOM})")
    parser.add_argument("--queued", type=int, default=20, help="bindings queued on the frozen leader")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds between recovery and the kill")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
