"""Optional client authentication: with `--client-ca-file` and allowed names, `/validate`, `/mutate`
and the extender routes answer only callers presenting such a certificate; others get 401 (no
certificate, names not allowed) or a refused handshake (another CA, no clientAuth usage) and
change nothing.

`limitguard serve` itself (start_serve, the demo cluster file) over real TLS. The apiserver presents
a client certificate to a webhook when its AdmissionConfiguration's kubeConfigFile names one for
the webhook's host (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/authentication.go,
AuthenticationInfoResolver); kube-scheduler's extender `tlsConfig` carries certFile/keyFile
(kubernetes/kube-scheduler config/v1/types.go, ExtenderTLSConfig).
"""

from __future__ import annotations

import argparse
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import start_serve
from limitguard.http.modes import HttpMode
from tests.integration.http.certificates import (
    CLIENT,
    SERVER_ONLY,
    certificate_dir,
    client_context,
    client_pair,
)
from tests.support import REPO, binding, pod, pod_create

DEMO = REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml"


async def post(url: str, context: ssl.SSLContext, body: Any) -> int:
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session,
        session.post(url, data=orjson.dumps(body), headers={"Content-Type": "application/json"}) as answer,
    ):
        await answer.read()
        return answer.status


def serve_args(cert_dir: Path, http_mode: HttpMode, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(
        [
            *("--cluster", str(DEMO), "--cert-dir", str(cert_dir), "--host", "127.0.0.1", "--port", "0"),
            *("--http-mode", http_mode.name, *extra),
        ]
    )


async def test_with_client_authentication_only_the_named_callers_are_answered(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    cert_dir = certificate_dir(tmp_path / "tls")
    client_ca = certificate_dir(tmp_path / "client-ca")
    clients = tmp_path / "clients"
    apiserver = client_pair(clients, "apiserver", client_ca, "limitguard-apiserver-client", [], CLIENT)
    scheduler = client_pair(clients, "scheduler", client_ca, "kube-scheduler", ["kube-scheduler.svc"], CLIENT)
    args = serve_args(
        cert_dir,
        http_mode,
        *("--client-ca-file", str(client_ca / "ca.crt"), "--client-name", "limitguard-apiserver-client"),
        *("--extender-client-name", "kube-scheduler.svc"),
    )
    running = await start_serve(args, {})
    try:
        url = f"https://127.0.0.1:{running.port}"
        ledger = running.services.state.ledger
        bind = binding("pod5", "node2", uid="b1")
        forged = pod_create(pod("forged", node_name="node1", cpu="100000", owner_kind="DaemonSet"), uid="f1")
        extender_args = {"Pod": pod("pod5", cpu="1"), "NodeNames": ["node1", "node2"]}
        nobody, api, sched = (
            client_context(cert_dir),
            client_context(cert_dir, apiserver),
            client_context(cert_dir, scheduler),
        )

        for path, body in (("/validate", bind), ("/validate", forged), ("/mutate", forged)):
            assert await post(url + path, nobody, body) == 401
            assert await post(url + path, sched, body) == 401  # the CA alone is not enough: the name
        for verb in ("filter", "prioritize"):
            assert await post(f"{url}/extender/{verb}", nobody, extender_args) == 401
            assert await post(f"{url}/extender/{verb}", api, extender_args) == 401
        assert len(ledger) == 0  # no refused review held room

        assert await post(url + "/validate", api, bind) == 200
        assert len(ledger) == 1
        assert await post(url + "/mutate", api, forged) == 200
        for verb in ("filter", "prioritize"):
            assert await post(f"{url}/extender/{verb}", sched, extender_args) == 200
        refusals = running.services.metrics.registry.get_sample_value(
            "limitguard_bad_requests_total", {"webhook": "validate", "status": "401"}
        )
        assert refusals == 4

        stranger = client_pair(clients, "stranger", certificate_dir(tmp_path / "x"), "x", [], CLIENT)
        with pytest.raises(aiohttp.ClientError):  # a certificate no trusted CA issued fails the handshake
            await post(url + "/validate", client_context(cert_dir, stranger), bind)
        server_only = client_pair(
            clients, "server-only", client_ca, "limitguard-apiserver-client", [], SERVER_ONLY
        )
        with pytest.raises(aiohttp.ClientError):  # so does one without the clientAuth usage: no HTTP answer
            await post(url + "/validate", client_context(cert_dir, server_only), bind)
        assert len(ledger) == 1
    finally:
        await running.stop()


async def test_without_client_authentication_the_routes_stay_open(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    cert_dir = certificate_dir(tmp_path / "tls")
    running = await start_serve(serve_args(cert_dir, http_mode), {})
    try:
        status = await post(
            f"https://127.0.0.1:{running.port}/validate", client_context(cert_dir), binding("pod5", "node2")
        )
        assert status == 200
        assert running.services.peer_gates == {}
    finally:
        await running.stop()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--client-name", "a"], "need --client-ca-file"),
        (["--client-ca-file", "CA"], "needs --client-name or --extender-client-name"),
        (["--client-ca-file", "missing.crt", "--client-name", "a"], "cannot read the CA bundle"),
    ],
)
async def test_incomplete_client_authentication_options_stop_serve(
    tmp_path: Path, http_mode: HttpMode, extra: list[str], message: str
) -> None:
    from limitguard.certs.peers import PeerCAError

    cert_dir = certificate_dir(tmp_path / "tls")
    extra = [str(cert_dir / "ca.crt") if item == "CA" else item for item in extra]
    with pytest.raises(PeerCAError, match=message):
        await start_serve(serve_args(cert_dir, http_mode, *extra), {})
