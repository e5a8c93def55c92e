"""`limitguard certs`: files, hostname verification, and the in-cluster mode through the kubernetes client
(the Secret and caBundle logic itself: tests/unit/certs/test_cluster.py)."""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from limitguard.certs import generate as certs
from limitguard.cli import certs as certs_command
from limitguard.testing.fakeapi import FakeApiServer
from tests.e2e.chart.conftest import CHART, FULLNAME, NAMESPACE
from tests.e2e.chart.server import serve
from tests.support import HANG_GUARD_SECONDS
from tests.unit.certs.webhook_configurations import bundle_of, configuration

SERVICE, NS = "limitguard", "limitguard-system"


def run_certs(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    certs_command.add_arguments(parser)
    return certs_command.run(parser.parse_args(list(argv)))


@pytest.fixture
def cert_dir(tmp_path: Path) -> Path:
    assert run_certs("--service", SERVICE, "--namespace", NS, "--out", str(tmp_path)) == 0
    return tmp_path


async def handshake(port: int, ca_file: Path, server_hostname: str) -> x509.Certificate:
    context = ssl.create_default_context(cafile=str(ca_file))
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname=server_hostname)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        return x509.load_der_x509_certificate(der)
    finally:
        writer.close()
        await writer.wait_closed()


# -- files and hostname verification -------------------------------------------------------------
def test_certs_command_writes_a_ca_and_a_serving_certificate_for_the_service_names(cert_dir: Path) -> None:
    assert {p.name for p in cert_dir.iterdir()} >= {"ca.crt", "ca.key", "tls.crt", "tls.key"}
    assert (cert_dir / "tls.key").stat().st_mode & 0o077 == 0
    serving = x509.load_pem_x509_certificate((cert_dir / "tls.crt").read_bytes())
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == [
        SERVICE,
        f"{SERVICE}.{NS}",
        f"{SERVICE}.{NS}.svc",
        f"{SERVICE}.{NS}.svc.cluster.local",
    ]


async def test_tls_client_verifies_the_service_name_and_rejects_others(cert_dir: Path) -> None:
    async with serve(cert_dir) as server:
        for name in certs.service_hostnames(SERVICE, NS):
            peer = await handshake(server.port, cert_dir / "ca.crt", name)
            assert peer.public_bytes(ssl_encoding()) == (cert_dir / "tls.crt").read_bytes()
        for wrong in (f"other.{NS}.svc", f"{SERVICE}.default.svc", "localhost"):
            with pytest.raises(ssl.SSLCertVerificationError, match=r"[Hh]ostname mismatch"):
                await handshake(server.port, cert_dir / "ca.crt", wrong)
        foreign = certs.generate(certs.service_hostnames(SERVICE, NS))
        (cert_dir / "other-ca.crt").write_bytes(foreign.ca_cert)
        with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer"):
            await handshake(server.port, cert_dir / "other-ca.crt", f"{SERVICE}.{NS}.svc")


def ssl_encoding() -> Any:
    from cryptography.hazmat.primitives.serialization import Encoding

    return Encoding.PEM


async def test_helm_test_script_passes_against_the_server_and_fails_on_a_wrong_ca(tmp_path: Path) -> None:
    """The exact script the `helm test` pod runs (charts/limitguard/files/admission-test.py)."""
    assert run_certs("--service", FULLNAME, "--namespace", NAMESPACE, "--out", str(tmp_path)) == 0
    script = CHART / "files" / "admission-test.py"
    async with serve(tmp_path) as server:
        env = {
            **os.environ,
            "LIMITGUARD_SERVICE_HOST": f"{FULLNAME}.{NAMESPACE}.svc",
            "LIMITGUARD_CONNECT_HOST": "127.0.0.1",
            "LIMITGUARD_PORT": str(server.port),
            "LIMITGUARD_CA_FILE": str(tmp_path / "ca.crt"),
            "LIMITGUARD_TIMEOUT_SECONDS": str(HANG_GUARD_SECONDS),
        }
        ok = await _run(script, env)
        assert ok[0] == 0 and ok[1].startswith("OK: "), ok
        pem_env = {**env, "LIMITGUARD_CA_FILE": "", "LIMITGUARD_CA_PEM": (tmp_path / "ca.crt").read_text()}
        assert (await _run(script, pem_env))[0] == 0
        foreign = tmp_path / "foreign-ca.crt"
        foreign.write_bytes(certs.generate(["x"]).ca_cert)
        bad = await _run(script, {**env, "LIMITGUARD_CA_FILE": str(foreign)})
        assert bad[0] == 1 and "FAIL" in bad[1] and "certificate verify failed" in bad[1], bad


async def _run(script: Path, env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script.read_text(),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 2 * HANG_GUARD_SECONDS)  # after its own timeout
    return process.returncode or 0, out.decode()


def test_certs_command_rejects_non_positive_days(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_certs("--service", "s", "--namespace", "n", "--out", str(tmp_path), "--days", "0") == 2
    assert "--days" in capsys.readouterr().err


# -- the same, through the kubernetes client against the fake apiserver ---------------------------
async def certs_in_thread(*argv: str) -> int:
    """`limitguard certs` blocks in the kubernetes client while the fake apiserver serves on this loop."""
    return await asyncio.to_thread(run_certs, *argv)


async def test_generate_mode_jobs_end_to_end_through_the_kubernetes_client(
    apiserver: tuple[FakeApiServer, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The two hook Jobs' command lines, as rendered by the chart, against the fake apiserver."""
    api, kubeconfig = apiserver
    common = [
        "--service",
        FULLNAME,
        "--namespace",
        NAMESPACE,
        "--days",
        "30",
        "--secret",
        f"{FULLNAME}-tls",
        "--kubeconfig",
        kubeconfig,
    ]
    previous = [f"--previous-ca-from=mutating/{FULLNAME}", f"--previous-ca-from=validating/{FULLNAME}"]
    # pre-install: create the Secret (the webhook configurations do not exist yet).
    assert await certs_in_thread(*common, *previous, "--out", str(tmp_path / "create")) == 0
    assert capsys.readouterr().out.strip().endswith(": created")
    secret = api.stored("secrets", f"{NAMESPACE}/{FULLNAME}-tls")
    assert secret is not None and secret["type"] == "kubernetes.io/tls"
    ca = base64.b64decode(secret["data"]["ca.crt"])
    assert (tmp_path / "create" / "ca.crt").read_bytes() == ca
    # helm creates the configurations; post-install: reuse the Secret and patch both.
    api.apply(
        "mutatingwebhookconfigurations", configuration("defaults.x.io") | {"metadata": {"name": FULLNAME}}
    )
    api.apply(
        "validatingwebhookconfigurations",
        configuration("a.x.io", "b.x.io") | {"metadata": {"name": FULLNAME}},
    )
    patch_args = [
        f"--patch-webhook-configuration=mutating/{FULLNAME}",
        f"--patch-webhook-configuration=validating/{FULLNAME}",
    ]
    assert await certs_in_thread(*common, "--out", str(tmp_path / "patch"), *patch_args) == 0
    out = capsys.readouterr().out
    assert "reused" in out and f"mutating/{FULLNAME}, validating/{FULLNAME}" in out
    for kind in ("mutating", "validating"):
        config = api.stored(f"{kind}webhookconfigurations", FULLNAME)
        assert config is not None
        for index in range(len(config["webhooks"])):
            assert bundle_of(config, index) == [x509.load_pem_x509_certificate(ca)]
    # A second upgrade: nothing created, nothing patched.
    written = api.rv
    assert await certs_in_thread(*common, *previous, "--out", str(tmp_path / "again")) == 0
    assert await certs_in_thread(*common, "--out", str(tmp_path / "again"), *patch_args) == 0
    assert api.rv == written
    # A renewal: delete the Secret and upgrade. The new ca.crt, then caBundle, trust both CAs.
    api.delete("secrets", f"{NAMESPACE}/{FULLNAME}-tls")
    assert await certs_in_thread(*common, *previous, "--out", str(tmp_path / "renew")) == 0
    assert "created (ca.crt also trusts 1 previous CA(s))" in capsys.readouterr().out
    assert await certs_in_thread(*common, "--out", str(tmp_path / "renew"), *patch_args) == 0
    renewed = (tmp_path / "renew" / "ca.crt").read_bytes()
    assert x509.load_pem_x509_certificates(renewed)[1:] == [x509.load_pem_x509_certificate(ca)]
    config = api.stored("validatingwebhookconfigurations", FULLNAME)
    assert config is not None and bundle_of(config) == x509.load_pem_x509_certificates(renewed)


async def test_in_cluster_errors_are_one_clear_line(
    apiserver: tuple[FakeApiServer, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, kubeconfig = apiserver
    code = await certs_in_thread(
        "--service",
        FULLNAME,
        "--namespace",
        NAMESPACE,
        "--out",
        str(tmp_path),
        "--secret",
        "s",
        "--patch-webhook-configuration",
        "validating/missing",
        "--kubeconfig",
        kubeconfig,
    )
    assert code == 1
    assert "no validatingwebhookconfiguration named 'missing'" in capsys.readouterr().err


def test_previous_ca_from_needs_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--service", "s", "--namespace", "n", "--out", str(tmp_path), "--previous-ca-from", "lg"]
    assert run_certs(*args) == 2
    assert "--previous-ca-from applies to --secret only" in capsys.readouterr().err
