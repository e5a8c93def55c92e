"""Certificate rotation under load: no request may fail, new connections get the new certificate.

The server is the real app with the real CertificateReloader, serving the files the chart mounts
from the TLS Secret. Rotation happens two ways: `limitguard.certs.generate.write` (atomic file replaces, key
first) and the way kubelet updates a Secret volume (a new timestamped directory, then the `..data`
symlink swapped atomically). The client trusts every CA involved, as caBundle does during a
rotation in generate mode (previous CA kept) or certManager mode (CA unchanged).
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from tests.e2e.chart.server import serve
from limitguard.certs import generate as certs

SERVICE, NS = "limitguard", "limitguard"
HOSTNAME = f"{SERVICE}.{NS}.svc"
ROTATIONS = 4
FRESH_WORKERS, KEEPALIVE_WORKERS = 6, 2


def kubelet_project(directory: Path, certificates: certs.CertificateSet) -> None:
    """What kubelet's AtomicWriter does for a Secret volume."""
    stamp = directory / f"..{time.time_ns()}"
    stamp.mkdir()
    for name, data in ((certs.TLS_CERT, certificates.tls_cert), (certs.TLS_KEY, certificates.tls_key),
                       (certs.CA_CERT, certificates.ca_cert)):
        (stamp / name).write_bytes(data)
        link = directory / name
        if not link.is_symlink():
            link.symlink_to(Path("..data") / name)
    temporary = directory / "..data_tmp"
    temporary.symlink_to(stamp.name)
    os.replace(temporary, directory / "..data")


def file_write(directory: Path, certificates: certs.CertificateSet) -> None:
    certs.write(certificates, directory)


def review() -> tuple[str, dict[str, object]]:
    uid = str(uuid.uuid4())
    return uid, {
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": uid, "operation": "CREATE", "namespace": "team-a", "name": "p",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "object": {"metadata": {"name": "p", "namespace": "team-a"},
                       "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }


async def peer_certificate(port: int, context: ssl.SSLContext) -> bytes:
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname=HOSTNAME)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
        await writer.wait_closed()
    return x509.load_der_x509_certificate(der).public_bytes(Encoding.PEM)


@pytest.mark.parametrize("rotate", [file_write, kubelet_project], ids=["certs.write", "kubelet-symlink-swap"])
async def test_rotation_under_load_loses_no_request(
    tmp_path: Path, rotate: Callable[[Path, certs.CertificateSet], None]
) -> None:
    sets = [certs.generate(certs.service_hostnames(SERVICE, NS)) for _ in range(ROTATIONS + 1)]
    rotate(tmp_path, sets[0])
    context = ssl.create_default_context(cadata="".join(s.ca_cert.decode() for s in sets))
    counts = {"ok": 0, "failed": 0}
    failures: list[str] = []
    stop = asyncio.Event()

    async def worker(session: aiohttp.ClientSession, url: str) -> None:
        while not stop.is_set():
            uid, body = review()
            try:
                async with session.post(url, json=body, server_hostname=HOSTNAME) as response:
                    answer = await response.json()
                assert response.status == 200 and answer["response"]["uid"] == uid
                assert answer["response"]["allowed"] is True
                counts["ok"] += 1
            except Exception as error:  # every failure counts
                counts["failed"] += 1
                failures.append(f"{type(error).__name__}: {error}")

    async with serve(tmp_path, reload_interval=0.05) as server:
        url = f"https://127.0.0.1:{server.port}/validate"
        fresh = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, force_close=True))
        keepalive = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context))
        tasks = [asyncio.create_task(worker(fresh, url)) for _ in range(FRESH_WORKERS)]
        tasks += [asyncio.create_task(worker(keepalive, url)) for _ in range(KEEPALIVE_WORKERS)]
        try:
            assert await peer_certificate(server.port, context) == sets[0].tls_cert
            for index in range(1, ROTATIONS + 1):
                await asyncio.sleep(0.25)
                before = counts["ok"]
                rotate(tmp_path, sets[index])
                deadline = time.monotonic() + 5
                while server.reloader.reloads < index and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                assert server.reloader.reloads == index, "the reloader did not pick up the new pair"
                # Every new connection now gets the new certificate.
                for _ in range(3):
                    assert await peer_certificate(server.port, context) == sets[index].tls_cert
                await asyncio.sleep(0.1)
                assert counts["ok"] > before, "no request completed across the rotation"
        finally:
            stop.set()
            await asyncio.gather(*tasks)
            await fresh.close()
            await keepalive.close()
    print(f"\nrotation ({rotate.__name__}): {counts['ok']} requests, {counts['failed']} failed, "
          f"{server.reloader.reloads} reloads")
    assert counts["failed"] == 0, failures[:5]
    assert counts["ok"] >= 100
