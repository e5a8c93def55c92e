"""`/leader/*` admits only the replicas, over mutual TLS; forwarding never changes a verdict; a CA
rotation reaches the forwarding client.

Real servers on 127.0.0.1 with real certificates: the leader and the follower are limitguard's app
wired as `serve` wires a replica (limitguard.cli.replicas.route_through_leader); leadership is fixed
by the test, never by time. OpenSSL checks a client certificate's purpose against the clientAuth
extended key usage when a server verifies it (openssl/openssl ssl/ssl_cert.c, ssl_verify_cert_chain:
the "ssl_client" purpose on the server side), so the serving pair carries clientAuth.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
from pathlib import Path

import aiohttp
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from limitguard.certs import generate as certs
from limitguard.http.modes import HttpMode
from limitguard.testing.clock import FakeClock
from tests.integration.http.certificates import (
    CLIENT,
    PEER_NAME,
    SERVER_ONLY,
    SERVING_NAMES,
    certificate_dir,
    client_context,
    client_pair,
)
from tests.integration.http.replicapair import KUBELET_SPREAD, NEW_CA_DELAY, Fixed, Replica, post, replica
from tests.support import binding


def bind(name: str, uid: str) -> bytes:
    return orjson.dumps(binding(name, "node1", uid=uid))


async def test_the_leader_route_admits_only_a_replica_certificate(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    cert_dir = certificate_dir(tmp_path / "tls")
    other_ca = certificate_dir(tmp_path / "other")
    clients = tmp_path / "clients"
    replica_pair = (cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY)
    async with replica(cert_dir, http_mode, Fixed(deciding=True)) as leader:
        url = f"{leader.served.url}/leader/validate"
        refused = {
            "no certificate": None,
            "same CA, another name": client_pair(
                clients, "other", cert_dir, "intruder", ["intruder.svc"], CLIENT
            ),
        }
        for why, pair in refused.items():
            status, answer = await post(url, client_context(cert_dir, pair), bind("p0", why))
            assert status == 401, why
            assert answer["error"].startswith("replica authentication: "), answer
        assert len(leader.state.ledger) == 0  # nothing decided, nothing held

        failing_handshakes = {
            "another CA, the peer name": client_pair(
                clients, "foreign", other_ca, PEER_NAME, [PEER_NAME], CLIENT
            ),
            "serverAuth only": client_pair(clients, "server", cert_dir, PEER_NAME, [PEER_NAME], SERVER_ONLY),
        }
        for why, pair in failing_handshakes.items():
            with pytest.raises(aiohttp.ClientError):
                await post(url, client_context(cert_dir, pair), bind("p0", why))
        assert len(leader.state.ledger) == 0

        status, decision = await post(url, client_context(cert_dir, replica_pair), bind("p0", "replica"))
        assert status == 200 and decision["allowed"] is True
        assert len(leader.state.ledger) == 1

        # The apiserver's route stays open without client authentication configured.
        status, review = await post(
            f"{leader.served.url}/validate", client_context(cert_dir), bind("p1", "api")
        )
        assert status == 200 and review["response"]["allowed"] is True
        assert len(leader.state.ledger) == 2


def deep_binding(name: str, uid: str, levels: int) -> bytes:
    """A binding whose object carries a value nested *levels* deep: orjson decodes it, cannot encode it."""
    review = binding(name, "node1", uid=uid)
    review["request"]["object"]["metadata"]["annotations"] = {"deep": "@"}
    head, tail = orjson.dumps(review).split(b'"@"')
    return head + b'{"a":' * levels + b"1" + b"}" * levels + tail


async def test_a_follower_relays_the_leaders_verdict_even_on_input_it_could_not_re_encode(
    tmp_path: Path,
    http_mode: HttpMode,
) -> None:
    cert_dir = certificate_dir(tmp_path / "tls")
    async with replica(cert_dir, http_mode, Fixed(deciding=True)) as leader:
        leader_address = f"127.0.0.1:{leader.served.port}"
        async with replica(cert_dir, http_mode, Fixed(deciding=False, address=leader_address)) as follower:
            api = client_context(cert_dir)  # the apiserver: verifies the server, presents nothing
            answers = [
                await post(f"{follower.served.url}/validate", api, bind(f"p{i}", f"u{i}")) for i in (0, 1)
            ]
            assert [answer["response"]["allowed"] for _, answer in answers] == [True, True]
            assert len(leader.state.ledger) == 2 and len(follower.state.ledger) == 0  # the leader decided

            status, answer = await post(
                f"{follower.served.url}/validate", api, deep_binding("p2", "deep", 300)
            )
            assert status == 200
            assert (
                answer["response"]["allowed"] is False
            )  # node1 is full: the leader denied, the follower says so
            assert "exceeds" in answer["response"]["status"]["message"]
            assert follower.forwarder.reloads == 0


async def test_after_a_ca_rotation_forwarding_works_once_the_follower_reloads(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    """Both replicas mount one Secret; a rotation replaces ca.crt, tls.crt and tls.key at once."""
    cert_dir = certificate_dir(tmp_path / "tls")
    old_pair = tmp_path / "old"
    old_pair.mkdir()
    for name in (certs.CA_CERT, certs.TLS_CERT, certs.TLS_KEY):
        (old_pair / name).write_bytes((cert_dir / name).read_bytes())
    async with replica(cert_dir, http_mode, Fixed(deciding=True)) as leader:
        leader_address = f"127.0.0.1:{leader.served.port}"
        async with replica(cert_dir, http_mode, Fixed(deciding=False, address=leader_address)) as follower:
            certificate_dir(cert_dir)  # the rotation: a new CA and a new serving pair in place
            assert leader.served.reloader is not None and leader.served.reloader.check()
            api = client_context(cert_dir)

            status, answer = await post(
                f"{follower.served.url}/validate", old_context(old_pair), bind("p0", "u0")
            )
            assert status == 200 and answer["response"]["allowed"] is False  # forward failed: Deny's 503
            assert answer["response"]["status"]["code"] == 503
            assert len(leader.state.ledger) == 0
            assert failures(follower, "unreachable") == 1  # the old CA cannot verify the new leader

            assert follower.served.reloader is not None and follower.served.reloader.check()
            assert follower.forwarder.reloads == 1
            status, answer = await post(f"{follower.served.url}/validate", api, bind("p0", "u1"))
            assert status == 200 and answer["response"]["allowed"] is True
            assert len(leader.state.ledger) == 1

            # The rotated-away pair is refused by the route, though the handshake still trusts its CA.
            stale = (old_pair / certs.TLS_CERT, old_pair / certs.TLS_KEY)
            status, refusal = await post(
                f"{leader.served.url}/leader/validate", client_context(cert_dir, stale), bind("p1", "u2")
            )
            assert status == 401 and "not issued by the CA" in refusal["error"]
            assert len(leader.state.ledger) == 1


async def test_a_generate_mode_renewal_keeps_every_forward_working(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    """The renewal's Secret trusts the new CA and the one it replaces (ca.crt); each replica's kubelet
    projects it at its own time, and each serves the new certificate only NEW_CA_DELAY after it saw it.
    Whatever each replica holds in between, the follower's forwards are decided by the leader."""
    leader_dir, follower_dir = certificate_dir(tmp_path / "leader"), tmp_path / "follower"
    shutil.copytree(leader_dir, follower_dir)
    renewed = certs.generate(SERVING_NAMES)
    secret = tmp_path / "renewed"
    certs.write(renewed, secret)
    (secret / certs.CA_CERT).write_bytes(renewed.ca_cert + (leader_dir / certs.CA_CERT).read_bytes())
    both = ssl.create_default_context(cadata=(secret / certs.CA_CERT).read_text())  # the apiserver's caBundle
    clock = FakeClock()
    async with replica(leader_dir, http_mode, Fixed(deciding=True), clock=clock) as leader:
        address = f"127.0.0.1:{leader.served.port}"
        async with replica(follower_dir, http_mode, Fixed(False, address), clock=clock) as follower:
            projected = {"follower": 0.0, "leader": KUBELET_SPREAD}
            step = 2.0  # the reloaders' poll
            while clock.now() <= KUBELET_SPREAD + NEW_CA_DELAY + step:
                for name, member, directory in (
                    ("follower", follower, follower_dir),
                    ("leader", leader, leader_dir),
                ):
                    if clock.now() == projected[name]:
                        shutil.copytree(secret, directory, dirs_exist_ok=True)  # kubelet updates this pod
                    assert member.served.reloader is not None
                    member.served.reloader.check()
                uid = f"u{clock.now():.0f}"
                status, answer = await post(f"{follower.served.url}/validate", both, bind("p0", uid))
                assert status == 200 and answer["response"]["allowed"] is True, (clock.now(), answer)
                clock.advance(step)
            assert failures(follower, "unreachable") + failures(follower, "refused") == 0
            assert len(leader.state.ledger) == 1 and len(follower.state.ledger) == 0  # the leader decided
            for member in (follower, leader):
                assert member.served.reloader is not None and member.served.reloader.reloads == 1
                assert await served_certificate(member.served.port, both) == renewed.tls_cert


async def served_certificate(port: int, context: ssl.SSLContext) -> bytes:
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname=PEER_NAME)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
        await writer.wait_closed()
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)


def failures(member: Replica, reason: str) -> float:
    registry = member.services.metrics.registry
    return registry.get_sample_value("limitguard_forward_failures_total", {"reason": reason}) or 0.0


def old_context(old_dir: Path) -> ssl.SSLContext:
    """The follower still serves the old pair until its own reloader checks."""
    return client_context(old_dir)


async def test_a_follower_whose_certificate_the_leader_refuses_gets_no_decision(
    tmp_path: Path, http_mode: HttpMode, caplog: pytest.LogCaptureFixture
) -> None:
    """Same CA, another name (a workload the shared issuer also signed): 401, counted as refused."""
    cert_dir = certificate_dir(tmp_path / "tls")
    other = client_pair(tmp_path / "clients", "other", cert_dir, "other", ["other.svc"], CLIENT)
    async with replica(cert_dir, http_mode, Fixed(deciding=True)) as leader:
        leader_address = f"127.0.0.1:{leader.served.port}"
        async with replica(
            cert_dir, http_mode, Fixed(deciding=False, address=leader_address), other
        ) as follower:
            status, answer = await post(
                f"{follower.served.url}/validate", client_context(cert_dir), bind("p0", "u0")
            )
            assert status == 200 and answer["response"]["allowed"] is False
            assert answer["response"]["status"]["code"] == 503  # Deny: the scheduler retries
            assert failures(follower, "refused") == 1
            assert "leader 127.0.0.1" in answer["response"]["status"]["message"]
            (logged,) = [r for r in caplog.records if r.getMessage() == "forward to the leader failed"]
            assert logged.error == (  # type: ignore[attr-defined]
                "refused: replica authentication: the client certificate's names (other, other.svc) "
                "are not admitted on this route"
            )
            assert len(leader.state.ledger) == 0 and len(follower.state.ledger) == 0
