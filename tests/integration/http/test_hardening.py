"""Hardening: key permissions, TLS only, slow clients, bounded bodies, what the logs may contain."""

from __future__ import annotations

import asyncio
import logging
import os
import stat

import aiohttp
import orjson
import pytest

from limitguard.certs import generate as certs
from limitguard.core.config import Enforcement, UnboundPolicy
from limitguard.testing.examples import config, worked_example
from limitguard.testing.server import client_context
from tests.support import HANG_GUARD_SECONDS, binding, container, pod, pod_create


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
            async with plain.post(
                f"http://127.0.0.1:{port}/validate", json=binding("pod5", "node1")
            ) as response:
                await response.read()


def content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise AssertionError(f"no Content-Length in {head!r}")


async def test_a_slow_body_is_cut_off_with_408(start_server, cert_dir):
    """A body that stops arriving is answered 408 by the body timeout, not left hanging."""
    server = await start_server(worked_example(), config(), body_timeout_seconds=0.5)
    port = int(server.url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=client_context(cert_dir), server_hostname="localhost"
    )
    writer.write(
        b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b'Content-Length: 1000\r\n\r\n{"kind":'
    )
    await writer.drain()
    # Headers and the announced body; not to EOF: the server lingers to drain the unread body.
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG_GUARD_SECONDS)
    payload = await asyncio.wait_for(reader.readexactly(content_length(head)), HANG_GUARD_SECONDS)
    writer.close()
    assert head.startswith(b"HTTP/1.1 408")
    assert orjson.loads(payload) == {
        "error": "body not received within 0.5s",  # the injected body timeout is what fired
        "status": 408,
    }


STALLED = 200
REST_OF_HEADERS = b"1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "


async def test_many_stalled_connections_do_not_delay_a_good_request(start_server, cert_dir):
    """Slowloris: 200 connections that never finish their headers hold no worker (asyncio has
    none to hold). A real request is answered while all of them are still open and unanswered;
    afterwards each stalled one is finished and answered, which shows it was held open throughout."""
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])

    stalled = []
    for _ in range(STALLED):
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_context(cert_dir), server_hostname="localhost"
        )
        writer.write(b"POST /validate HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        stalled.append((reader, writer))
    await asyncio.gather(*(writer.drain() for _, writer in stalled))

    status, answer = await asyncio.wait_for(
        server.post("/validate", binding("pod5", "node1")), HANG_GUARD_SECONDS
    )
    assert status == 200 and answer["response"]["allowed"] is False

    body = orjson.dumps(binding("pod5", "node1", dry_run=True))

    async def finish(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        writer.write(REST_OF_HEADERS + str(len(body)).encode() + b"\r\n\r\n" + body)
        response = await reader.read()
        writer.close()
        return response

    responses = await asyncio.wait_for(
        asyncio.gather(*(finish(*pair) for pair in stalled)), HANG_GUARD_SECONDS
    )
    assert all(response.startswith(b"HTTP/1.1 200") for response in responses)


async def test_info_logs_never_carry_the_object(start_server, caplog):
    secret = "s3cr3t-token-value"
    leaky = pod(
        "leaky",
        node_name="node2",
        containers=[
            container(limits={"cpu": "1"}, env=[{"name": "TOKEN", "value": secret}]),
        ],
    )
    leaky["metadata"]["annotations"] = {"note": secret}
    server = await start_server(worked_example(), config())
    with caplog.at_level(logging.DEBUG):  # allowed admissions are logged at debug
        await server.post("/validate", pod_create(leaky))
        await server.post("/mutate", pod_create(leaky))
        configmap = {
            "uid": "cm",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "CREATE",
            "namespace": "default",
            "name": "c",
            "object": {"metadata": {"name": "c"}, "data": {"password": secret}},
        }
        await server.post(
            "/validate",
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": configmap},
        )
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


@pytest.mark.parametrize(
    ("enforcement", "action"),
    [(Enforcement.DENY, "deny"), (Enforcement.WARN, "warn"), (Enforcement.DRY_RUN, "dryrun")],
)
async def test_a_finding_is_logged_with_what_was_found(start_server, caplog, enforcement, action):
    """A denial, a warning and a dry-run finding carry their text in the line (a DryRun rollout
    reads its findings there); a plain allow carries none."""
    server = await start_server(worked_example(), config(enforcement=enforcement))
    with caplog.at_level(logging.DEBUG):
        await server.post("/validate", binding("pod5", "node1", uid="over", dry_run=True))  # node1 full
        await server.post("/validate", binding("pod5", "node2", uid="fits", dry_run=True))
    found = {r.uid: r for r in caplog.records if r.getMessage() == "admission"}
    over, fits = found["over"], found["fits"]
    assert over.action == action and over.reason == "exceeds"
    assert over.detail.startswith("binding pod default/pod5 to node node1: does not fit")
    assert 'node "node1": cpu limit 4' in over.detail
    warnings = getattr(over, "warnings", ())
    assert [text.startswith("limitguard: node node1 over limit ratio") for text in warnings] == (
        [True] if action == "warn" else []
    )
    assert not hasattr(fits, "detail") and not hasattr(fits, "warnings")


async def test_a_pod_with_only_generate_name_is_logged_by_its_prefix_and_told_apart_by_uid(
    start_server, caplog
):
    """The mutating webhook sees no name yet (the apiserver generates it after mutation); the
    validating one gets the generated name in the object, even when the request's name is empty."""
    server = await start_server(worked_example(), config())

    def generated(uid: str, name: str = "") -> dict:
        body = pod_create(pod("x", node_name="node1", cpu="4"), uid=uid)
        metadata = body["request"]["object"]["metadata"]
        metadata["generateName"], metadata["name"] = "web-7d4b9c8f6d-", name
        body["request"]["name"] = ""
        return body

    with caplog.at_level(logging.DEBUG):
        await server.post("/mutate", generated("m-1"))
        await server.post("/validate", generated("v-1"))
        await server.post("/validate", generated("v-2"))
        await server.post("/validate", generated("v-3", name="web-7d4b9c8f6d-x7k2p"))
    logged = [(r.webhook, r.uid, r.object) for r in caplog.records if r.getMessage() == "admission"]
    assert logged == [
        ("mutate", "m-1", "default/web-7d4b9c8f6d-*"),
        ("validate", "v-1", "default/web-7d4b9c8f6d-*"),
        ("validate", "v-2", "default/web-7d4b9c8f6d-*"),
        ("validate", "v-3", "default/web-7d4b9c8f6d-x7k2p"),
    ]


@pytest.mark.parametrize("node_name", ["node1", None])
async def test_a_generate_name_pod_is_named_alike_in_its_log_line_and_its_detail(
    start_server, caplog, node_name
):
    """The line's `object` and its `detail` (the message) name the pod the same way: `prefix*`, not
    a name cut to `default/` (a pod bound by name to a full node; an unbound one nothing fits)."""
    server = await start_server(worked_example(), config(unbound_pods=UnboundPolicy.DENY))
    body = pod_create(pod("x", node_name=node_name, cpu="40"), uid="big")
    metadata = body["request"]["object"]["metadata"]
    metadata["generateName"], metadata["name"] = "big-", ""
    body["request"]["name"] = ""
    with caplog.at_level(logging.DEBUG):
        await server.post("/validate", body)
    [line] = [r for r in caplog.records if r.getMessage() == "admission"]
    assert line.object == "default/big-*" and not line.allowed
    assert line.detail.startswith("pod default/big-* "), line.detail
    assert "default/ " not in line.detail
