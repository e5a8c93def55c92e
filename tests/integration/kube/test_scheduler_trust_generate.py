"""generate mode's renewal with the second scheduler: a new CA and certificate at once, and not one
failed filter call.

The chart's two certificate Jobs run `limitguard certs` against the fake apiserver, at install and
at the documented renewal (delete the Secret, upgrade). Two limitguard replicas serve the real app
with the Deployment's reloader (a certificate from a new CA only after NEW_CA_DELAY); two pods of
the second scheduler (tests/integration/kube/schedulermodel.py) run their sidecar's TrustKeeper on
the Secret's ca.crt, leader from the scheduler's Lease, which a restarting holder hands to the other
pod (kube-scheduler releases it on shutdown). kubelet projects the new Secret into each pod at its
own time, up to KUBELET apart. Every pod's scheduler calls every replica at every poll, each call on
a new connection. Time is one injected clock; the certificates' wall time follows it.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from limitguard.certs import generate as certs
from limitguard.certs.renewal import made_at
from limitguard.kube.leader import LeaseRecord, lease_object
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.testing.clientcerts import client_pair
from limitguard.testing.clock import FakeClock
from limitguard.testing.examples import worked_example
from limitguard.testing.fakeapi import FakeApiServer
from limitguard.testing.server import Serving, app_services, serving
from tests.integration.kube.certjobs import ca_bundles, run_job, secret_files, webhook_configurations
from tests.integration.kube.schedulermodel import (
    CLIENT_NAME,
    CONFIG,
    HOSTNAME,
    LEADER_DELAY,
    LEASE,
    NAMESPACE,
    OVERLAP,
    POLL,
    SERVICE,
    client_ca,
    scheduler_pod_on,
)

NEW_CA_DELAY = 180.0  # the chart's certs.generate.newCADelaySeconds
KUBELET = 90.0  # kubelet's pod sync: every 60 s plus up to 50 % jitter (pkg/kubelet/pod_workers.go)
SECRET = f"{SERVICE}-tls"
SERVING_FILES = ("ca.crt", "tls.crt", "tls.key")
PROJECTED = {"limitguard-0": 0.0, "sched-0": 0.0, "limitguard-1": KUBELET, "sched-1": KUBELET}


def kubelet_writes(files: dict[str, bytes], directory: Path, names: tuple[str, ...]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        certs.write_file(directory / name, files[name], 0o600)


async def served_certificate(served: Serving, ca_pem: bytes) -> bytes:
    context = ssl.create_default_context(cadata=ca_pem.decode())
    _, writer = await asyncio.open_connection("127.0.0.1", served.port, ssl=context, server_hostname=HOSTNAME)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
        await writer.wait_closed()
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)


async def test_a_generate_mode_renewal_fails_no_filter_call(
    tmp_path: Path, apiserver: FakeApiServer, lease_api: KubeLeaseApi
) -> None:
    kubeconfig = str(tmp_path / "kubeconfig")  # lease_api wrote it for the started apiserver
    # helm install: the create Job, the webhook configurations, the patch Job.
    assert await run_job("create", SERVICE, NAMESPACE, kubeconfig, tmp_path / "job") == 0
    webhook_configurations(apiserver, SERVICE)
    assert await run_job("patch", SERVICE, NAMESPACE, kubeconfig, tmp_path / "job") == 0
    installed = secret_files(apiserver, NAMESPACE, SECRET)
    assert ca_bundles(apiserver, SERVICE) == {installed["ca.crt"]}

    clock = FakeClock()
    wall_start = time.time()

    def wall() -> float:
        return wall_start + clock.now()

    async def never(seconds: float) -> None:  # the reloaders check when the test says so
        await clock.sleep(10**9)

    client_ca(tmp_path / "client-ca", "scheduler-client-ca")
    usage = [ExtendedKeyUsageOID.CLIENT_AUTH]
    for name in ("limitguard-0", "limitguard-1"):
        kubelet_writes(installed, tmp_path / name, SERVING_FILES)

    def replica(name: str) -> AbstractAsyncContextManager[Serving]:
        """A replica of the Deployment: its mounted Secret, the reloader with the chart's delay."""
        services = app_services(worked_example(), CONFIG)
        return serving(
            services,
            tmp_path / name,
            reload_sleep=never,
            clock=clock,
            wall_time=wall,
            new_ca_delay=NEW_CA_DELAY,
        )

    async with replica("limitguard-0") as first, replica("limitguard-1") as second:
        replicas = {"limitguard-0": first, "limitguard-1": second}

        async def hand_over(name: str) -> None:
            """kube-scheduler releases the Lease on shutdown; the other pod takes it."""
            lease = await lease_api.get()
            if ((lease or {}).get("spec") or {}).get("holderIdentity", "").startswith(f"{name}_"):
                other = "sched-1" if name == "sched-0" else "sched-0"
                stamp = "2026-01-01T00:00:00.000000Z"
                apiserver.apply(
                    "leases",
                    lease_object(NAMESPACE, LEASE, LeaseRecord(f"{other}_1", 15, stamp, stamp, 0, "")),
                )

        pods = []
        for name in ("sched-0", "sched-1"):
            kubelet_writes(installed, tmp_path / name / "limitguard", ("ca.crt",))
            client_pair(tmp_path / name / "client", "tls", tmp_path / "client-ca", CLIENT_NAME, [], usage)
            pods.append(
                scheduler_pod_on(
                    tmp_path,
                    name,
                    first.port,
                    clock,
                    lease_api,
                    renewal_ca_files=("ca.crt",),
                    wall_time=wall,
                    on_restart=hand_over,
                    keep_alive=False,  # every call a new handshake: what the trust must verify
                )
            )

        # The renewal: delete the Secret, helm upgrade (the create Job, then the patch Job).
        apiserver.delete("secrets", f"{NAMESPACE}/{SECRET}")
        assert await run_job("create", SERVICE, NAMESPACE, kubeconfig, tmp_path / "job") == 0
        assert await run_job("patch", SERVICE, NAMESPACE, kubeconfig, tmp_path / "job") == 0
        renewed = secret_files(apiserver, NAMESPACE, SECRET)
        new_ca, old_ca = x509.load_pem_x509_certificates(renewed["ca.crt"])
        assert old_ca == x509.load_pem_x509_certificate(installed["ca.crt"])
        assert ca_bundles(apiserver, SERVICE) == {renewed["ca.crt"]}  # the apiserver trusts both too
        cutoff = made_at(new_ca) + OVERLAP - wall_start  # when the old CA's overlap ends, on the clock

        failed: list[tuple[float, str, str]] = []
        switched: dict[str, float] = {}
        while clock.now() <= cutoff + LEADER_DELAY + 4 * POLL:
            for name, at in PROJECTED.items():
                if clock.now() == at:
                    directory = tmp_path / name / ("limitguard" if name.startswith("sched") else "")
                    names = ("ca.crt",) if name.startswith("sched") else SERVING_FILES
                    kubelet_writes(renewed, directory, names)
            for name, replica in replicas.items():
                assert replica.reloader is not None
                if replica.reloader.check() and replica.reloader.reloads == 1 and name not in switched:
                    switched[name] = clock.now()
            for pod in pods:
                await pod.keeper.step()
                for name, replica in replicas.items():
                    if not await pod.scheduler.filter(replica.port):
                        failed.append((clock.now(), pod.name, name))
            clock.advance(POLL)

        assert failed == []
        # Each replica served the new certificate NEW_CA_DELAY after its kubelet wrote it.
        assert switched == {name: PROJECTED[name] + NEW_CA_DELAY for name in replicas}
        for replica in replicas.values():
            assert await served_certificate(replica, renewed["ca.crt"]) == renewed["tls.crt"]
        # Each scheduler pod restarted twice: to trust the new CA (before any replica served it),
        # and to drop the old one once the overlap was over; the Lease holder last each time.
        for pod in pods:
            learnt, dropped = pod.restarted_at
            assert learnt < min(switched.values())
            assert cutoff <= dropped <= math.ceil(cutoff / POLL) * POLL + LEADER_DELAY
            assert x509.load_pem_x509_certificates(pod.keeper.settings.bundle_file.read_bytes()) == [new_ca]
            await pod.scheduler.close()
