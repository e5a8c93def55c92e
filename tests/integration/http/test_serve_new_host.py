"""`make run HOST=...` after an earlier run: `serve --host` on a certificate directory generated for
another address reissues the serving certificate from the same CA, so a client trusting ca.crt
reaches the new address; the first run's CA file is still the one to pass to curl."""

from __future__ import annotations

import argparse
import ssl
from pathlib import Path

import aiohttp

from limitguard.certs import generate as certs
from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import start_serve
from tests.support import REPO

DEMO = REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml"


async def test_serve_on_another_host_names_it_in_the_certificate(tmp_path: Path) -> None:
    cert_dir = tmp_path / "certs"
    certs.write(certs.generate(["localhost", "127.0.0.1", "::1"]), cert_dir)  # the first `make run`
    ca_before = (cert_dir / certs.CA_CERT).read_bytes()
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        ["--cluster", str(DEMO), "--cert-dir", str(cert_dir), "--host", "127.0.0.2", "--port", "0"]
    )
    running = await start_serve(args, {})
    try:
        context = ssl.create_default_context(cafile=str(cert_dir / certs.CA_CERT))
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session,
            session.get(f"https://127.0.0.2:{running.port}/healthz") as response,
        ):
            assert (response.status, await response.text()) == (200, "ok")
    finally:
        await running.stop()
    assert (cert_dir / certs.CA_CERT).read_bytes() == ca_before
