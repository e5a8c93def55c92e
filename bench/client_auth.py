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
import datetime
import socket
import ssl
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from limitguard.certs import generate as certs
from limitguard.testing.builders import binding

from bench.harness import REPO, percentile_ms, serve_command, start, stop

CLIENT_NAME = "limitguard-apiserver"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def client_certificate(directory: Path, ca_dir: Path) -> tuple[Path, Path]:
    ca_cert = x509.load_pem_x509_certificate((ca_dir / certs.CA_CERT).read_bytes())
    ca_key = serialization.load_pem_private_key((ca_dir / certs.CA_KEY).read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CLIENT_NAME)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    crt, pem_key = directory / "client.crt", directory / "client.key"
    crt.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    pem_key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return crt, pem_key


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
        pair = client_certificate(root, root / "client-ca")
        context = ssl.create_default_context(cafile=str(root / "tls" / certs.CA_CERT))
        context.load_cert_chain(*pair)
        cluster = str(REPO / "webhook" / "demo" / "cluster.yaml")
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
