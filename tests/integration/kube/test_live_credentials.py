"""How limitguard finds the cluster: kubeconfig / in-cluster precedence, TLS, rotating tokens."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest
from kubernetes.config import incluster_config

from limitguard.certs import generate as certs
from limitguard.http.tls import server_context
from limitguard.kube.client import KubeConfigError, load_configuration, tls_context
from limitguard.kube.livefeed import start_live_feed
from limitguard.state.store import ClusterState
from limitguard.testing.builders import make_node
from limitguard.testing.clock import FakeClock
from tests.integration.kube.helpers import FAST, Connected, all_watching, eventually, write_kubeconfig
from tests.integration.kube.test_live_sync import small_cluster


@pytest.fixture
def fake_pod_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cert_dir: Path) -> Path:
    """What the kubelet mounts into a pod: a service-account token and the cluster CA, plus the env."""
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text("pod-token-1")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(account / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(cert_dir / certs.CA_CERT))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    return account


def test_explicit_kubeconfig_wins_over_the_service_account(fake_pod_environment, tmp_path) -> None:
    path = write_kubeconfig(tmp_path, "https://10.9.8.7:6443", token="from-file")
    configuration, source = load_configuration(path)
    assert configuration.host == "https://10.9.8.7:6443"
    assert source == f"kubeconfig {path}"
    assert configuration.get_api_key_with_prefix("BearerToken") == "Bearer from-file"


def test_service_account_wins_over_kubeconfig_env(fake_pod_environment, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KUBECONFIG", write_kubeconfig(tmp_path, "https://10.9.8.7:6443"))
    configuration, source = load_configuration(None)
    assert source == "in-cluster service account"
    assert configuration.host == "https://127.0.0.1:6443"
    assert configuration.get_api_key_with_prefix("BearerToken") == "bearer pod-token-1"


def test_kubeconfig_env_outside_a_pod(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    path = write_kubeconfig(tmp_path, "https://10.1.1.1:443")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{path}")  # a path list, like kubectl's
    configuration, source = load_configuration(None)
    assert configuration.host == "https://10.1.1.1:443"
    assert source.startswith("kubeconfig ")


def test_no_credentials_anywhere_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    with pytest.raises(KubeConfigError, match=r"no cluster credentials: not in a pod .* --kubeconfig"):
        load_configuration(None)


def test_insecure_skip_tls_verify_is_honoured(tmp_path) -> None:
    path = Path(write_kubeconfig(tmp_path, "https://10.1.1.1:443"))
    path.write_text(
        path.read_text().replace("    server:", "    insecure-skip-tls-verify: true\n    server:")
    )
    configuration, _ = load_configuration(str(path))
    context = tls_context(configuration)
    assert context is not None and context.verify_mode == ssl.CERT_NONE and not context.check_hostname


async def test_in_cluster_over_tls_with_a_rotating_token(
    apiserver, fake_pod_environment, cert_dir, monkeypatch
) -> None:
    # Make the loader's own refresh period elapse at once, as if an hour had passed between reads.
    read_token = incluster_config.InClusterConfigLoader._read_token_file

    def read_and_expire(loader: incluster_config.InClusterConfigLoader) -> None:
        read_token(loader)
        loader.token_expires_at = datetime.datetime.now()

    monkeypatch.setattr(incluster_config.InClusterConfigLoader, "_read_token_file", read_and_expire)
    small_cluster(apiserver)
    apiserver.token = "pod-token-1"
    await apiserver.start(ssl_context=server_context(cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY))
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(apiserver.port))

    clock = FakeClock(autojump=True)
    state = ClusterState(clock=clock)
    feed = await start_live_feed(state, None, settings=FAST, token_refresh_seconds=30.0, clock=clock)
    try:
        assert feed.client.base_url == f"https://127.0.0.1:{apiserver.port}"
        await eventually(lambda: state.ready, "synced over TLS with the service-account token")

        await all_watching(apiserver)
        reconnect = Connected(state, None, feed, clock).hold_retries()  # type: ignore[arg-type]
        (fake_pod_environment / "token").write_text("pod-token-2")  # the kubelet rotates the token
        apiserver.token = "pod-token-2"
        clock.advance(30.0)  # limitguard's refresh period passes: the next request reads it again
        apiserver.close_watches()
        await eventually(lambda: not apiserver.watchers, "old streams closed")
        apiserver.apply("nodes", make_node("node-after-rotation"))
        reconnect.set()
        await eventually(
            lambda: state.node("node-after-rotation") is not None, "event seen with the new token"
        )
    finally:
        await feed.stop()
