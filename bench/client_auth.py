"""What client authentication costs: `/validate` with and without `--client-ca-file`, same run.

Starts two real `limitguard serve` processes on the demo cluster: the baseline (no client CA: the
server asks for no certificate) and one with `--client-ca-file` / `--client-name` (the server asks
every client for a certificate, verifies it, and the route checks its issuer and name). The client
presents its certificate to both. Measured, one request at a time so the figures are latencies:

- keep-alive: requests on one connection (the apiserver reuses connections);
- fresh: one new TLS connection per request (handshake, certificate verification, request).

Prints the median and p99 of each and the ratio to the baseline.

    python -m bench.client_auth               # 2,000 keep-alive and 300 fresh requests each
    python -m bench.client_auth --requests 500 --fresh 100
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from cryptography.x509.oid import ExtendedKeyUsageOID

from bench.harness import REPO, free_port, percentile_ms, serve_command, start, stop
from limitguard.certs import generate as certs
from limitguard.testing.builders import binding
from limitguard.testing.clientcerts import client_context, client_pair

CLIENT_NAME = "limitguard-apiserver"


async def measure(url: str, context: ssl.SSLContext, requests: int, fresh: int) -> dict[str, list[float]]:
    body = orjson.dumps(binding("pod5", "node2", dry_run=True))
    headers = {"Content-Type": "application/json"}
    timings: dict[str, list[float]] = {"keep-alive": [], "fresh": []}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=1)) as session:
        for _ in range(requests):
            started = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as answer:
                await answer.read()
                assert answer.status == 200, answer.status
            timings["keep-alive"].append(time.perf_counter() - started)
    for _ in range(fresh):
        connector = aiohttp.TCPConnector(ssl=context, force_close=True)
        async with aiohttp.ClientSession(connector=connector) as session:
            started = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as answer:
                await answer.read()
                assert answer.status == 200, answer.status
            timings["fresh"].append(time.perf_counter() - started)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="keep-alive requests per server")
    parser.add_argument("--fresh", type=int, default=300, help="one-connection requests per server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        certs.write(certs.generate(["localhost", "127.0.0.1"]), root / "tls")
        certs.write(certs.generate(["client-ca"]), root / "client-ca")
        pair = client_pair(
            root, "client", root / "client-ca", CLIENT_NAME, [], [ExtendedKeyUsageOID.CLIENT_AUTH]
        )
        context = client_context(root / "tls", pair)
        cluster = str(REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml")
        common = ("--cluster", cluster, "--cert-dir", str(root / "tls"))
        authenticated = (
            "--client-ca-file",
            str(root / "client-ca" / certs.CA_CERT),
            "--client-name",
            CLIENT_NAME,
        )
        results = {}
        for label, options in (("baseline", common), ("client auth", (*common, *authenticated))):
            port = free_port()
            process = start(serve_command(*options, port=port), f"https://127.0.0.1:{port}/healthz", context)
            try:
                url = f"https://127.0.0.1:{port}/validate"
                results[label] = asyncio.run(measure(url, context, args.requests, args.fresh))
            finally:
                stop(process)
    print(
        f"/validate, dryRun binding, one request at a time ({args.requests} keep-alive, {args.fresh} fresh)"
    )
    for kind in ("keep-alive", "fresh"):
        base = percentile_ms(results["baseline"][kind], 0.5)
        for label, timings in results.items():
            median, p99 = percentile_ms(timings[kind], 0.5), percentile_ms(timings[kind], 0.99)
            print(
                f"  {kind:10} {label:11}  p50 {median:7.3f} ms  p99 {p99:7.3f} ms  p50 ratio {median / base:.2f}"
            )


if __name__ == "__main__":
    main()
