"""Hardening: key permissions, TLS only, slow clients, bounded bodies, what the logs may contain."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time

import aiohttp
import pytest

from tests.admission.test_validating import config, worked_example
from tests.support import binding, container, pod, pod_create
from webhook import certs


def test_private_keys_are_written_0600_and_replaced_atomically(tmp_path):
    old_umask = os.umask(0)  # even a permissive umask must not widen the key files
    try:
        certs.write(certs.generate(["svc.ns.svc"]), tmp_path)
    finally:
        os.umask(old_umask)
    for name in (certs.TLS_KEY, certs.CA_KEY):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE((tmp_path / certs.TLS_CERT).stat().st_mode) == 0o644
    assert not list(tmp_path.glob(".*.tmp"))


def test_ensure_keeps_existing_certificates(tmp_path):
    assert certs.ensure_serving_certificates(tmp_path, ["localhost"]) is True
    first = (tmp_path / certs.TLS_CERT).read_bytes()
    assert certs.ensure_serving_certificates(tmp_path, ["localhost"]) is False
    assert (tmp_path / certs.TLS_CERT).read_bytes() == first


async def test_plaintext_http_is_not_served(start_server):
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])
    async with aiohttp.ClientSession() as plain:
        with pytest.raises(aiohttp.ClientError):
            async with plain.post(f"http://127.0.0.1:{port}/validate", json=binding("pod5", "node1")) as response:
                await response.read()


async def test_a_slow_body_is_cut_off_with_408(start_server, cert_dir):
    server = await start_server(worked_example(), config(), body_timeout_seconds=0.5)
    port = int(server.url.rsplit(":", 1)[1])
    from tests.conftest import client_context

    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context(cert_dir),
                                                   server_hostname="localhost")
    writer.write(b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 1000\r\n\r\n{\"kind\":")
    await writer.drain()
    started = time.monotonic()
    status_line = await asyncio.wait_for(reader.readline(), timeout=5)
    writer.close()
    assert status_line.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 3


async def test_many_stalled_connections_do_not_delay_a_good_request(start_server, cert_dir):
    """Slowloris: 200 connections that never finish their headers hold no worker (asyncio has
    none to hold); a real request is still answered at once."""
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])
    from tests.conftest import client_context

    stalled = []
    for _ in range(200):
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context(cert_dir),
                                                  server_hostname="localhost")
        writer.write(b"POST /validate HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        stalled.append(writer)
    await asyncio.gather(*(writer.drain() for writer in stalled))
    started = time.monotonic()
    status, answer = await server.post("/validate", binding("pod5", "node1"))
    elapsed = time.monotonic() - started
    for writer in stalled:
        writer.close()
    assert status == 200 and answer["response"]["allowed"] is False
    assert elapsed < 2


async def test_info_logs_never_carry_the_object(start_server, caplog):
    secret = "s3cr3t-token-value"
    leaky = pod("leaky", node_name="node2", containers=[
        container(limits={"cpu": "1"}, env=[{"name": "TOKEN", "value": secret}]),
    ])
    leaky["metadata"]["annotations"] = {"note": secret}
    server = await start_server(worked_example(), config())
    with caplog.at_level(logging.DEBUG):  # allowed admissions are logged at debug
        await server.post("/validate", pod_create(leaky))
        await server.post("/mutate", pod_create(leaky))
        configmap = {"uid": "cm", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                     "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "operation": "CREATE",
                     "namespace": "default", "name": "c",
                     "object": {"metadata": {"name": "c"}, "data": {"password": secret}}}
        await server.post("/validate", {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                        "request": configmap})
    admissions = [record for record in caplog.records if record.getMessage() == "admission"]
    assert len(admissions) == 3
    for record in caplog.records:
        rendered = record.getMessage() + repr(vars(record))
        assert secret not in rendered


async def test_allowed_admissions_log_at_debug_and_denials_at_info(start_server, caplog):
    server = await start_server(worked_example(), config())
    with caplog.at_level(logging.INFO):
        await server.post("/validate", binding("pod5", "node2", uid="allowed", dry_run=True))
        await server.post("/validate", binding("pod5", "node1", uid="denied"))
    info = [(r.levelno, r.uid, r.allowed) for r in caplog.records if r.getMessage() == "admission"]
    assert info == [(logging.INFO, "denied", False)]
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        await server.post("/validate", binding("pod5", "node2", uid="allowed-again", dry_run=True))
    debug = [(r.levelno, r.uid, r.allowed) for r in caplog.records if r.getMessage() == "admission"]
    assert debug == [(logging.DEBUG, "allowed-again", True)]
