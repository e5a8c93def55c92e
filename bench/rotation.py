"""Certificate rotation under load: `limitguard serve` keeps answering while its certificate changes.

Runs the real server as a subprocess, drives it for --seconds with workers that open a fresh TLS
connection per request (so every handshake sees the current certificate) plus keep-alive workers,
and replaces tls.crt/tls.key every --every seconds. The client trusts each new CA before the
rotation, as a caBundle does during a rotation. Prints requests, failures, rotations, and how many
distinct certificates fresh connections saw; the baseline is the same load with no rotation.

    python -m bench.rotation                 # 60 s, rotation every 5 s
    python -m bench.rotation --seconds 10 --every 2
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import shutil
import ssl
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bench.admission import pod_body
from bench.harness import REPO, serve_command, start, stop
from limitguard.certs import generate as certs


@dataclass
class Tally:
    requests: int = 0
    failures: int = 0
    errors: list[str] = field(default_factory=list)
    certificates: set[str] = field(default_factory=set)


async def fresh_worker(url: str, context: ssl.SSLContext, body: bytes, stop: float, tally: Tally) -> None:
    while time.monotonic() < stop:
        try:
            connector = aiohttp.TCPConnector(ssl=context, force_close=True)
            async with (
                aiohttp.ClientSession(connector=connector) as session,
                session.post(url, data=body, headers={"Content-Type": "application/json"}) as response,
            ):
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}")
        except Exception as error:  # every failure counts, whatever its kind
            tally.failures += 1
            tally.errors.append(repr(error)[:200])
        tally.requests += 1


async def certificate_probe(port: int, context: ssl.SSLContext, stop: float, tally: Tally) -> None:
    """A bare TLS handshake twice a second: which serving certificate does a new connection get?"""
    while time.monotonic() < stop:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname="localhost")
        peer = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        tally.certificates.add(hashlib.sha256(peer).hexdigest()[:12])
        writer.close()
        await asyncio.sleep(0.5)


async def keepalive_worker(url: str, context: ssl.SSLContext, body: bytes, stop: float, tally: Tally) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=1)) as session:
        while time.monotonic() < stop:
            try:
                async with session.post(
                    url, data=body, headers={"Content-Type": "application/json"}
                ) as response:
                    await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"HTTP {response.status}")
            except Exception as error:
                tally.failures += 1
                tally.errors.append(repr(error)[:200])
            tally.requests += 1


async def run_load(
    url: str, context: ssl.SSLContext, seconds: float, rotate: tuple[Path, float] | None
) -> tuple[Tally, int]:
    tally = Tally()
    body = pod_body(1, {"cpu": "1"})
    stop = time.monotonic() + seconds
    rotations = 0

    async def rotator(directory: Path, every: float) -> None:
        nonlocal rotations
        while time.monotonic() + every < stop:
            await asyncio.sleep(every)
            fresh = certs.generate(["localhost", "127.0.0.1"])
            context.load_verify_locations(cadata=fresh.ca_cert.decode())  # caBundle gains the new CA first
            certs.write(fresh, directory)
            rotations += 1

    tasks = [fresh_worker(url, context, body, stop, tally) for _ in range(4)]
    tasks += [keepalive_worker(url, context, body, stop, tally) for _ in range(2)]
    tasks.append(certificate_probe(int(url.split(":")[2].split("/")[0]), context, stop, tally))
    if rotate:
        tasks.append(rotator(*rotate))
    await asyncio.gather(*tasks)
    return tally, rotations


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--every", type=float, default=5)
    parser.add_argument("--port", type=int, default=18450)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="limitguard-rotation-"))
    cert_dir = work / "certs"
    certs.write(certs.generate(["localhost", "127.0.0.1"]), cert_dir)
    (work / "cluster.yaml").write_text(
        (REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml").read_text()
    )
    context = ssl.create_default_context(cafile=str(cert_dir / certs.CA_CERT))
    url = f"https://localhost:{args.port}/validate"
    server = start(
        serve_command("--cluster", str(work / "cluster.yaml"), "--cert-dir", str(cert_dir), port=args.port),
        f"https://localhost:{args.port}/readyz",
        context,
    )
    try:
        baseline, _ = asyncio.run(run_load(url, context, min(args.seconds, 10), None))
        rotated, rotations = asyncio.run(run_load(url, context, args.seconds, (cert_dir, args.every)))
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)

    base_rate = baseline.requests / min(args.seconds, 10)
    rate = rotated.requests / args.seconds
    print(
        f"baseline (no rotation, {min(args.seconds, 10):g} s): {baseline.requests} requests, "
        f"{baseline.failures} failed, {base_rate:.0f} req/s"
    )
    print(
        f"rotation every {args.every:g} s for {args.seconds:g} s: {rotated.requests} requests, "
        f"{rotated.failures} failed, {rotations} rotations, {len(rotated.certificates)} distinct serving "
        f"certificates seen by new connections, {rate:.0f} req/s ({rate / base_rate:.0%} of baseline)"
    )
    for error in rotated.errors[:5]:
        print("  failure:", error)
    sys.exit(1 if rotated.failures else 0)


if __name__ == "__main__":
    main()
