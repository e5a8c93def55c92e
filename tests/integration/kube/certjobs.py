"""The chart's two certificate hook Jobs (templates/certs-generate.yaml) against a fake apiserver:
`limitguard certs` with the arguments the chart renders for a release named like the Service.

The Jobs reach the apiserver through the `kubernetes` client, which blocks, so they run on a thread
while the fake apiserver serves on the test's event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
from pathlib import Path

from limitguard.cli import certs as certs_command
from limitguard.testing.fakeapi import FakeApiServer

CONFIGURATIONS = ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")


def job_arguments(phase: str, service: str, namespace: str, kubeconfig: str, out: Path) -> list[str]:
    """What the chart passes: the `create` Job (pre-install, pre-upgrade) reads the previous CA from
    the webhook configurations, the `patch` Job (post-install, post-upgrade) sets their caBundle."""
    flag = "--previous-ca-from" if phase == "create" else "--patch-webhook-configuration"
    return [
        "--service",
        service,
        "--namespace",
        namespace,
        "--out",
        str(out),
        "--days",
        "365",
        "--secret",
        f"{service}-tls",
        f"{flag}=mutating/{service}",
        f"{flag}=validating/{service}",
        "--kubeconfig",
        kubeconfig,
    ]


async def run_job(phase: str, service: str, namespace: str, kubeconfig: str, out: Path) -> int:
    parser = argparse.ArgumentParser()
    certs_command.add_arguments(parser)
    args = parser.parse_args(job_arguments(phase, service, namespace, kubeconfig, out))
    return await asyncio.to_thread(certs_command.run, args)


def webhook_configurations(apiserver: FakeApiServer, name: str) -> None:
    """What `helm install` creates between the two Jobs: both configurations, without caBundle."""
    for plural in CONFIGURATIONS:
        hook = {"name": f"{plural[:8]}.limitguard.io", "clientConfig": {"service": {"name": name}}}
        apiserver.apply(plural, {"metadata": {"name": name}, "webhooks": [hook]})


def secret_files(apiserver: FakeApiServer, namespace: str, name: str) -> dict[str, bytes]:
    """The Secret's data as kubelet writes it into a pod's volume."""
    secret = apiserver.stored("secrets", f"{namespace}/{name}")
    assert secret is not None, f"no Secret {namespace}/{name}"
    return {key: base64.b64decode(value) for key, value in secret["data"].items()}


def ca_bundles(apiserver: FakeApiServer, name: str) -> set[bytes]:
    """Every caBundle of the two configurations (one value when they agree)."""
    found = set()
    for plural in CONFIGURATIONS:
        configuration = apiserver.stored(plural, name)
        assert configuration is not None
        for webhook in configuration["webhooks"]:
            found.add(base64.b64decode(webhook["clientConfig"].get("caBundle", "")))
    return found
