"""Helpers for the chart tests: the fetched helm binary and rendered manifests.

The machine may have an unrelated helm/kubectl on PATH; these tests only use the binaries that
`make tools` (scripts/fetch-tools.sh) places in `<repo>/.tools/bin`.
"""

from __future__ import annotations

import base64
import os
import platform
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from limitguard.certs import generate as certs
from limitguard.testing.fakeapi import FakeApiServer
from limitguard.testing.kubeconfig import write_kubeconfig
from tests.support import HANG_GUARD_SECONDS, REPO, LoopFactories, serving_loops_for

CHART = REPO / "charts" / "limitguard"
TOOLS = REPO / ".tools" / "bin"
#: scripts/fetch-tools.sh has helm and kubectl for linux/amd64 only.
FETCHABLE_HERE = platform.system() == "Linux" and platform.machine() in {"x86_64", "amd64"}
RELEASE, NAMESPACE = "lg", "limitguard"
FULLNAME = "lg-limitguard"


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> LoopFactories:
    """Certificate rotation under load runs once per event loop `limitguard serve` may run on: the
    reloader swaps the certificate inside the SSLContext each loop's TLS layer reads."""
    return serving_loops_for(item, "test_chart_rotation.py")


def tool(name: str) -> Path:
    """`.tools/bin/NAME`: found on PATH as `make test` sets it, else at the repo's own location."""
    on_path = shutil.which(name)
    if on_path and Path(on_path).resolve().parent == TOOLS.resolve():
        return Path(on_path)
    candidate = TOOLS / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    if not FETCHABLE_HERE:
        # scripts/fetch-tools.sh has no binaries for this platform: use the user's own, or say why not.
        if on_path:
            return Path(on_path)
        pytest.skip(
            f"{name} is not on PATH, and `make tools` fetches linux/amd64 binaries only "
            f"(this machine is {platform.system()}/{platform.machine()})"
        )
    pytest.fail(f"{candidate} is missing: run `make tools` (scripts/fetch-tools.sh) first", pytrace=False)


@dataclass
class Helm:
    binary: Path
    env: dict[str, str]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.binary), *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=HANG_GUARD_SECONDS,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    def template(self, *set_args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
        for item in set_args:
            args += ["--set", item]
        return self.run(*args, check=check)


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    home = tmp_path_factory.mktemp("helm-home")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    return Helm(tool("helm"), env)


@pytest.fixture(scope="session")
def provided_ca() -> tuple[str, certs.CertificateSet]:
    """A certificate set for `provided` mode and its CA as the base64 caBundle value."""
    generated = certs.generate(certs.service_hostnames(FULLNAME, NAMESPACE))
    return base64.b64encode(generated.ca_cert).decode(), generated


MODES: dict[str, list[str]] = {
    "default": [],
    "certManager": ["certs.mode=certManager"],
    "certManager-issuer": [
        "certs.mode=certManager",
        "certs.certManager.issuerRef.name=corp-ca",
        "certs.certManager.issuerRef.kind=ClusterIssuer",
        "certs.certManager.issuerRef.group=cert-manager.io",
    ],
    "generate": ["certs.mode=generate"],
    "provided": ["certs.mode=provided", "certs.provided.secretName=my-webhook-tls"],
}


@pytest.fixture(scope="session")
def render(helm: Helm, provided_ca: tuple[str, certs.CertificateSet]) -> Callable[..., list[dict[str, Any]]]:
    """render(mode, *extra --set items) -> the rendered objects (cached per arguments)."""
    cache: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    def _render(mode: str = "default", *extra: str) -> list[dict[str, Any]]:
        set_args = [*MODES[mode], *extra]
        if mode == "provided":
            set_args.append(f"certs.provided.caBundle={provided_ca[0]}")
        key = tuple(set_args)
        if key not in cache:
            output = helm.template(*set_args).stdout
            cache[key] = [doc for doc in yaml.safe_load_all(output) if doc]
        return cache[key]

    return _render


def find(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = find(objects, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


@pytest.fixture
async def apiserver(tmp_path: Path) -> AsyncIterator[tuple[FakeApiServer, str]]:
    """The fake apiserver the certificate Jobs talk to, and a kubeconfig for it."""
    server = FakeApiServer(token="t")
    url = await server.start()
    yield server, write_kubeconfig(tmp_path, url, token="t")
    await server.stop()
