"""Certificate rotation under load: no request may fail, new connections get the new certificate.

The server is the real app with the real CertificateReloader, serving the files the chart mounts
from the TLS Secret. Rotation happens two ways: `limitguard.certs.generate.write` (atomic file replaces, key
first) and the way kubelet updates a Secret volume (a new timestamped directory, then the `..data`
symlink swapped atomically). The client trusts every CA involved, as caBundle does during a
rotation in generate mode (previous CA kept) or certManager mode (CA unchanged).

No verdict depends on timing: the reloader's sleep is injected and released by the test, and each
step waits (with a hang guard only) for requests that provably began after the reload.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from limitguard.certs import generate as certs
from tests.e2e.chart.server import ReloaderTicks, serve
from tests.support import HANG_GUARD_SECONDS

SERVICE, NS = "limitguard", "limitguard"
HOSTNAME = f"{SERVICE}.{NS}.svc"
ROTATIONS = 4
FRESH_WORKERS, KEEPALIVE_WORKERS = 6, 2


def kubelet_project(directory: Path, certificates: certs.CertificateSet) -> None:
    """What kubelet's AtomicWriter does for a Secret volume."""
    stamp = directory / f"..{uuid.uuid4().hex}"
    stamp.mkdir()
    for name, data in (
        (certs.TLS_CERT, certificates.tls_cert),
        (certs.TLS_KEY, certificates.tls_key),
        (certs.CA_CERT, certificates.ca_cert),
    ):
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
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "operation": "CREATE",
            "namespace": "team-a",
            "name": "p",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "object": {
                "metadata": {"name": "p", "namespace": "team-a"},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
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


async def fresh_connection_post(port: int, context: ssl.SSLContext, body: bytes) -> tuple[int, dict, bytes]:
    """One request on its own new TLS connection: status, answer, and the certificate it was served."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname=HOSTNAME)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.write(
            b"POST /validate HTTP/1.1\r\nHost: "
            + HOSTNAME.encode()
            + b"\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        response = await reader.read()
    finally:
        writer.close()
    head, _, payload = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, orjson.loads(payload), x509.load_der_x509_certificate(der).public_bytes(Encoding.PEM)


@dataclass
class Load:
    """Requests numbered in the order they began; which ones were answered, and what fresh ones saw."""

    started: int = 0
    answered: dict[str, list[int]] = field(default_factory=lambda: {"fresh": [], "keepalive": []})
    fresh_certificates: list[tuple[int, bytes]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def begin(self) -> int:
        self.started += 1
        return self.started - 1

    def answered_since(self, kind: str, sequence: int) -> bool:
        return any(number >= sequence for number in self.answered[kind])


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for *condition*; the bound is a hang guard, never the verdict."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(poll(), HANG_GUARD_SECONDS)
    except TimeoutError:
        raise AssertionError(f"hang guard: {what}") from None


@pytest.mark.parametrize("rotate", [file_write, kubelet_project], ids=["certs.write", "kubelet-symlink-swap"])
async def test_rotation_under_load_loses_no_request(
    tmp_path: Path, rotate: Callable[[Path, certs.CertificateSet], None]
) -> None:
    """After each replacement the reloader's next check loads the new pair; from then on every new
    connection gets it (never an older one), kept-alive connections go on working, and no request
    anywhere fails."""
    sets = [certs.generate(certs.service_hostnames(SERVICE, NS)) for _ in range(ROTATIONS + 1)]
    generation = {certificates.tls_cert: index for index, certificates in enumerate(sets)}
    rotate(tmp_path, sets[0])
    context = ssl.create_default_context(cadata="".join(s.ca_cert.decode() for s in sets))
    load = Load()
    stop = asyncio.Event()
    ticks = ReloaderTicks()

    def check(sequence: int, kind: str, uid: str, status: int, answer: dict) -> None:
        assert status == 200 and answer["response"]["uid"] == uid and answer["response"]["allowed"] is True
        load.answered[kind].append(sequence)

    async def fresh_worker(port: int) -> None:
        while not stop.is_set():
            sequence, (uid, review_body) = load.begin(), review()
            try:
                status, answer, certificate = await fresh_connection_post(
                    port, context, orjson.dumps(review_body)
                )
                check(sequence, "fresh", uid, status, answer)
                load.fresh_certificates.append((sequence, certificate))
            except Exception as error:  # every failure counts
                load.failures.append(f"fresh #{sequence} {type(error).__name__}: {error}")

    async def keepalive_worker(session: aiohttp.ClientSession, url: str) -> None:
        while not stop.is_set():
            sequence, (uid, review_body) = load.begin(), review()
            try:
                async with session.post(url, json=review_body, server_hostname=HOSTNAME) as response:
                    answer = await response.json()
                check(sequence, "keepalive", uid, response.status, answer)
            except Exception as error:  # every failure counts
                load.failures.append(f"keep-alive #{sequence} {type(error).__name__}: {error}")

    reloaded_at: list[int] = [0]  # reloaded_at[i]: the first request number begun after reload i
    async with serve(tmp_path, reload_sleep=ticks.sleep) as server:
        url = f"https://127.0.0.1:{server.port}/validate"
        keepalive = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context))
        tasks = [asyncio.create_task(fresh_worker(server.port)) for _ in range(FRESH_WORKERS)]
        tasks += [asyncio.create_task(keepalive_worker(keepalive, url)) for _ in range(KEEPALIVE_WORKERS)]
        try:
            assert await peer_certificate(server.port, context) == sets[0].tls_cert
            await until(
                lambda: bool(load.failures or (load.answered["fresh"] and load.answered["keepalive"])),
                "no load before rotating",
            )
            for index in range(1, ROTATIONS + 1):
                rotate(tmp_path, sets[index])
                await asyncio.wait_for(ticks.tick(), HANG_GUARD_SECONDS)  # exactly one reloader check
                assert server.reloader.reloads == index, "the reloader did not pick up the new pair"
                reloaded_at.append(load.started)
                for _ in range(3):
                    assert await peer_certificate(server.port, context) == sets[index].tls_cert
                # Requests that began after this reload are answered, on new and on kept-alive connections.
                for kind in ("fresh", "keepalive"):
                    await until(
                        lambda kind=kind: bool(load.failures) or load.answered_since(kind, reloaded_at[-1]),
                        f"no {kind} request begun after reload {index} was answered",
                    )
                    assert load.failures == [], load.failures[:5]
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), HANG_GUARD_SECONDS)
            await keepalive.close()
    assert load.failures == [], load.failures[:5]
    # A fresh connection begun after reload i was served certificate i or a later one, never older.
    for sequence, certificate in load.fresh_certificates:
        newest_reload_before = max(i for i, first in enumerate(reloaded_at) if first <= sequence)
        assert generation[certificate] >= newest_reload_before, (sequence, generation[certificate])
    # Each certificate in turn reached the load: the first request after each reload saw it.
    served = load.fresh_certificates
    assert {generation[c] for _, c in served} == set(range(ROTATIONS + 1))
