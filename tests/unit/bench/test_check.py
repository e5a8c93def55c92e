"""bench.check's proxy for the client-authentication runs: what changes with --tls-front, and what not.

The server side must be the same in both setups (haproxy presents the client certificate and
verifies the server's); only wrk's leg to haproxy is plain HTTP or TLS.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.check import CLIENT_NAME, client_auth_files
from limitguard.certs import generate as certs


@pytest.fixture
def work(tmp_path: Path) -> Path:
    certs.write(certs.generate(["localhost", "127.0.0.1"]), tmp_path / "certs")
    return tmp_path


def lines_of(config: str, keyword: str) -> list[str]:
    return [line.strip() for line in config.splitlines() if line.strip().startswith(keyword)]


@pytest.mark.parametrize("tls_front", [False, True])
def test_the_servers_leg_is_tls_with_the_client_certificate_either_way(work: Path, tls_front: bool) -> None:
    options = client_auth_files(work, 9001, 9002, 9003, 9004, tls_front)
    config = (work / "haproxy.cfg").read_text()

    servers = lines_of(config, "server ")
    assert [line.split()[2] for line in servers] == ["127.0.0.1:9001", "127.0.0.1:9002"]
    for line in servers:
        assert f"ssl crt {work / 'client.pem'}" in line
        assert "verify required" in line
    assert options == (
        "--client-ca-file",
        str(work / "client-ca" / certs.CA_CERT),
        "--client-name",
        CLIENT_NAME,
        "--extender-client-name",
        CLIENT_NAME,
    )
    binds = lines_of(config, "bind ")
    assert [line.split()[1] for line in binds] == ["127.0.0.1:9003", "127.0.0.1:9004"]
    if tls_front:
        assert all(re.search(rf"ssl crt {re.escape(str(work / 'frontend.pem'))}$", line) for line in binds)
        assert (work / "frontend.pem").read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")
    else:
        assert all("ssl" not in line for line in binds)  # wrk speaks plain HTTP to the proxy
        assert not (work / "frontend.pem").exists()
