"""`limitguard certs`: files, hostname verification, and the in-cluster mode through the kubernetes client
(the Secret and caBundle logic itself: tests/unit/certs/test_cluster.py)."""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from cryptography import x509

from limitguard.certs import generate as certs
from limitguard.cli import certs as certs_command
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


# -- the same, through the kubernetes client against a loopback API ------------------------------
class FakeAPI(BaseHTTPRequestHandler):
    """Just the four calls `limitguard certs` makes, with the apiserver's status codes."""

    objects: dict[str, dict[str, Any]]
    requests: list[tuple[str, str, str]]

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self) -> None:
        self._send(
            404,
            {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404},
        )

    def _body(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, ""))
        obj = self.objects.get(self.path.split("?")[0])
        self._send(200, obj) if obj is not None else self._not_found()

    def do_POST(self) -> None:
        self.requests.append(("POST", self.path, self.headers["Content-Type"]))
        body = self._body()
        path = f"{self.path.split('?')[0]}/{body['metadata']['name']}"
        if path in self.objects:
            self._send(409, {"kind": "Status", "apiVersion": "v1", "reason": "AlreadyExists", "code": 409})
            return
        self.objects[path] = body
        self._send(201, body)

    def do_PATCH(self) -> None:
        self.requests.append(("PATCH", self.path, self.headers["Content-Type"]))
        path = self.path.split("?")[0]
        if path not in self.objects:
            self._not_found()
            return
        assert self.headers["Content-Type"] == "application/json-patch+json"
        self.objects[path] = jsonpatch.apply_patch(self.objects[path], self._body())
        self._send(200, self.objects[path])


@pytest.fixture
def fake_api(tmp_path: Path) -> Iterator[tuple[Path, type[FakeAPI]]]:
    handler = type("Handler", (FakeAPI,), {"objects": {}, "requests": []})
    admission = "/apis/admissionregistration.k8s.io/v1"
    handler.objects[f"{admission}/mutatingwebhookconfigurations/{FULLNAME}"] = configuration("defaults.x.io")
    handler.objects[f"{admission}/validatingwebhookconfigurations/{FULLNAME}"] = configuration(
        "a.x.io", "b.x.io"
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "t",
                "clusters": [{"name": "t", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
                "users": [{"name": "t", "user": {"token": "t"}}],
                "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}],
            }
        )
    )
    try:
        yield kubeconfig, handler
    finally:
        server.shutdown()
        server.server_close()


def test_generate_mode_jobs_end_to_end_through_the_kubernetes_client(
    fake_api: tuple[Path, type[FakeAPI]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The two hook Jobs' command lines, as rendered by the chart, against a loopback API."""
    kubeconfig, api = fake_api
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
        str(kubeconfig),
    ]
    # pre-install: create the Secret.
    assert run_certs(*common, "--out", str(tmp_path / "create")) == 0
    assert "created" in capsys.readouterr().out
    secret_path = f"/api/v1/namespaces/{NAMESPACE}/secrets/{FULLNAME}-tls"
    secret = api.objects[secret_path]
    ca = base64.b64decode(secret["data"]["ca.crt"])
    assert (tmp_path / "create" / "ca.crt").read_bytes() == ca
    # post-install: reuse it and patch both configurations.
    patch_args = [
        f"--patch-webhook-configuration=mutating/{FULLNAME}",
        f"--patch-webhook-configuration=validating/{FULLNAME}",
    ]
    assert run_certs(*common, "--out", str(tmp_path / "patch"), *patch_args) == 0
    out = capsys.readouterr().out
    assert "reused" in out and f"mutating/{FULLNAME}, validating/{FULLNAME}" in out
    assert api.objects[secret_path] is secret
    for kind in ("mutating", "validating"):
        config = api.objects[f"/apis/admissionregistration.k8s.io/v1/{kind}webhookconfigurations/{FULLNAME}"]
        for index in range(len(config["webhooks"])):
            assert bundle_of(config, index) == [x509.load_pem_x509_certificate(ca)]
    posts = [r for r in api.requests if r[0] == "POST"]
    assert len(posts) == 1 and posts[0][1].startswith(f"/api/v1/namespaces/{NAMESPACE}/secrets")
    # A second upgrade: nothing created, nothing patched.
    before = len(api.requests)
    assert run_certs(*common, "--out", str(tmp_path / "again"), *patch_args) == 0
    assert {method for method, _, _ in api.requests[before:]} == {"GET"}


def test_in_cluster_errors_are_one_clear_line(
    fake_api: tuple[Path, type[FakeAPI]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, _ = fake_api
    code = run_certs(
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
        str(kubeconfig),
    )
    assert code == 1
    assert "no validatingwebhookconfiguration named 'missing'" in capsys.readouterr().err
