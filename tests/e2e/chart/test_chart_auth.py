"""The chart's authentication values: replica mutual TLS and the optional client authentication.

Rendered with the real helm; the server's flags are parsed by `limitguard serve`'s own parser, so a
value that renders into a flag serve does not take fails here. cert-manager's `usages` names are
those of cert-manager.io/v1 KeyUsage (cert-manager/cert-manager pkg/apis/certmanager/v1/types.go).
"""

from __future__ import annotations

import argparse
import base64
from pathlib import Path

import pytest

from limitguard.certs import generate as certs
from limitguard.certs.cluster import secret_manifest
from limitguard.cli.serve import add_arguments
from limitguard.testing.fakeapi import FakeApiServer
from tests.e2e.chart.conftest import FULLNAME, NAMESPACE, Helm, find, one
from tests.e2e.chart.rendered import Render, server_container
from tests.e2e.chart.test_chart_certs import certs_in_thread
from tests.integration.http.certificates import SERVER_ONLY, client_pair

CA_PEM = certs.generate(["client-ca"]).ca_cert
CA_B64 = base64.b64encode(CA_PEM).decode()


def serve_args(objects: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(server_container(objects)["args"][1:])  # after "serve"


@pytest.mark.parametrize("mode", ["certManager", "certManager-issuer"])
def test_cert_manager_serving_certificates_can_authenticate_replicas(render: Render, mode: str) -> None:
    (serving,) = [c for c in find(render(mode), "Certificate") if not c["spec"].get("isCA")]
    assert {"server auth", "client auth"} <= set(serving["spec"]["usages"])


def test_generate_mode_delays_a_new_cas_certificate_and_other_modes_do_not(render: Render) -> None:
    """Only a generate-mode renewal makes a CA and its certificate at once (docs/helm.md)."""
    assert serve_args(render("generate")).new_ca_delay_seconds == 180
    assert serve_args(render("generate", "certs.generate.newCADelaySeconds=240")).new_ca_delay_seconds == 240
    for mode in ("certManager", "provided"):
        assert serve_args(render(mode)).new_ca_delay_seconds == 0


def test_the_peer_name_defaults_to_the_service_and_can_be_set(render: Render) -> None:
    assert serve_args(render("default")).peer_server_name == f"{FULLNAME}.{NAMESPACE}.svc"
    assert serve_args(render("default", "replicas.peerName=limitguard.example")).peer_server_name == (
        "limitguard.example"
    )


def test_without_client_auth_no_flag_no_mount_and_the_helm_test(render: Render) -> None:
    objects = render("default")
    args = serve_args(objects)
    assert (args.client_ca_file, args.client_names, args.extender_client_names) == (None, [], [])
    assert any(o["metadata"].get("annotations", {}).get("helm.sh/hook") == "test" for o in objects)


def test_client_auth_values_reach_serve_with_the_ca_mounted(render: Render) -> None:
    objects = render(
        "default",
        f"clientAuth.caBundle={CA_B64}",
        "clientAuth.admissionNames={limitguard-apiserver,apiserver-2}",
        "clientAuth.extenderNames={kube-scheduler}",
    )
    args = serve_args(objects)
    assert args.client_ca_file == "/etc/limitguard/client-ca.crt"
    assert args.client_names == ["limitguard-apiserver", "apiserver-2"]
    assert args.extender_client_names == ["kube-scheduler"]
    configmap = one(objects, "ConfigMap", f"{FULLNAME}-config")
    assert configmap["data"]["client-ca.crt"].strip() == CA_PEM.decode().strip()
    mounts = {m["mountPath"]: m for m in server_container(objects)["volumeMounts"]}
    assert mounts["/etc/limitguard/client-ca.crt"]["subPath"] == "client-ca.crt"
    # The helm test pod holds no admitted client certificate: it is not rendered.
    assert not any(o["metadata"].get("annotations", {}).get("helm.sh/hook") == "test" for o in objects)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ([f"clientAuth.caBundle={CA_B64}"], "clientAuth.caBundle needs clientAuth.admissionNames"),
        (["clientAuth.admissionNames={a}"], "need clientAuth.caBundle"),
        (["clientAuth.extenderNames={a}"], "need clientAuth.caBundle"),
    ],
)
def test_incomplete_client_auth_values_fail_to_render(helm: Helm, settings: list[str], message: str) -> None:
    result = helm.template(*settings, check=False)
    assert result.returncode != 0 and message in result.stderr


async def test_the_certs_job_warns_about_a_secret_from_before_client_auth(
    apiserver: tuple[FakeApiServer, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Secret the generate mode created before the serving certificate carried clientAuth is
    reused as it is (never regenerated), and the hook Job's log says why forwarding will fail."""
    api, kubeconfig = apiserver
    ca_dir = tmp_path / "old-ca"
    certs.write(certs.generate(["old"]), ca_dir)
    names = certs.service_hostnames(FULLNAME, NAMESPACE)
    crt, key = client_pair(tmp_path / "old", "tls", ca_dir, names[0], names, SERVER_ONLY)
    old = certs.CertificateSet((ca_dir / "ca.crt").read_bytes(), b"", crt.read_bytes(), key.read_bytes())
    api.apply("secrets", secret_manifest(NAMESPACE, f"{FULLNAME}-tls", old))
    common = ["--service", FULLNAME, "--namespace", NAMESPACE, "--secret", f"{FULLNAME}-tls"]
    assert await certs_in_thread(*common, "--kubeconfig", kubeconfig, "--out", str(tmp_path / "out")) == 0
    printed = capsys.readouterr()
    assert "reused" in printed.out
    assert "tls.crt lacks the client auth usage" in printed.err
    assert "Delete the Secret and upgrade again" in printed.err

    api.delete(
        "secrets", f"{NAMESPACE}/{FULLNAME}-tls"
    )  # what the operator does; the next upgrade creates one
    assert await certs_in_thread(*common, "--kubeconfig", kubeconfig, "--out", str(tmp_path / "new")) == 0
    printed = capsys.readouterr()
    assert "created" in printed.out and printed.err == ""
