"""The second scheduler through a year of certificates: the serving certificate renewed, its CA
rotated, the scheduler's client certificate renewed. Two replicas of a model of kube-scheduler's
extender client call limitguard's real server over TLS (client certificate required); each runs
beside a TrustKeeper on its own copy of the mounted files, whose leader comes from the scheduler's
Lease on the fake apiserver. Time is the keepers' injected clock.

The model does what kube-scheduler does (pkg/scheduler/extender.go makeTransport, client-go
rest.TLSConfigFor): its caFile is read once, at start, into a fixed trust; its client certificate
files are read again for each new TLS handshake; a kept-alive connection keeps its certificate.
"""

from __future__ import annotations

import datetime
import shutil
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from limitguard.certs import generate as certs
from limitguard.certs.trust import KeeperSettings, TrustKeeper
from limitguard.cli.schedulertrust import holder_is
from limitguard.core.config import Config, LimitAwareConfig
from limitguard.http.peers import PeerGate
from limitguard.kube.client import KubeClient, load_configuration
from limitguard.kube.leader import LeaseRecord, lease_object
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.testing.clientcerts import client_pair
from limitguard.testing.clock import FakeClock
from limitguard.testing.examples import worked_example
from limitguard.testing.fakeapi import FakeApiServer
from limitguard.testing.server import app_services, serving
from tests.integration.extender.shapes import args_names, scheduler_pod
from tests.integration.kube.helpers import write_kubeconfig

NAMESPACE, LEASE = "limitguard", "limitguard-scheduler"
SERVICE = "limitguard"
HOSTNAME = f"{SERVICE}.{NAMESPACE}.svc"
CLIENT_NAME = "limitguard-scheduler"
POLL, LEADER_DELAY, OVERLAP = 2.0, 60.0, 600.0
BOUND = POLL + LEADER_DELAY  # after the pod's files change, per replica
CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 125}))


class Scheduler:
    """One kube-scheduler's extender client: trust fixed at start, client files read per handshake."""

    def __init__(self, pod: Path, port: int) -> None:
        self.pod, self.port = pod, port
        self.session: aiohttp.ClientSession | None = None
        self.starts = 0

    def start(self) -> None:
        context = ssl.create_default_context(cadata=(self.pod / "trust" / "ca.crt").read_text())
        self.context = context
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context))
        self.starts += 1

    async def restart(self) -> bool:
        assert self.session is not None
        await self.session.close()
        self.start()
        return True

    async def filter(self) -> bool:
        """One filter call on the kept-alive connection (a new one when none is open)."""
        assert self.session is not None
        self.context.load_cert_chain(self.pod / "client" / "tls.crt", self.pod / "client" / "tls.key")
        try:
            async with self.session.post(
                f"https://127.0.0.1:{self.port}/extender/filter",
                json=args_names(scheduler_pod(), ["node1", "node2"]),
                server_hostname=HOSTNAME,
            ) as response:
                return response.status == 200 and (await response.json())["nodenames"] == ["node2"]
        except (aiohttp.ClientError, ssl.SSLError):
            return False


@dataclass
class Pod:
    """A replica of the second scheduler: its mounted files, its kube-scheduler and its keeper."""

    name: str
    scheduler: Scheduler
    keeper: TrustKeeper
    restarted_at: list[float]


def ca_set(directory: Path) -> certs.CertificateSet:
    generated = certs.generate(certs.service_hostnames(SERVICE, NAMESPACE))
    certs.write(generated, directory)
    return generated


def client_ca(directory: Path, name: str) -> None:
    """A client CA of its own name: OpenSSL finds a client certificate's issuer by name, and a
    client certificate without an authority key identifier cannot tell two same-named CAs apart."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True)
    (directory / certs.CA_CERT).write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (directory / certs.CA_KEY).write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )


def project(source: Path, pod: Path, *names: str) -> None:
    """kubelet updating one pod's copy of a mounted Secret (each pod gets it at its own time)."""
    for name in names:
        (pod / "limitguard" / name).write_bytes((source / name).read_bytes())


@pytest.fixture
async def lease_api(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[KubeLeaseApi]:
    url = await apiserver.start()
    configuration, _ = load_configuration(write_kubeconfig(tmp_path, url))
    client = KubeClient(configuration)
    record = LeaseRecord(
        "sched-0_4f1c", 15, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z", 0, ""
    )
    apiserver.apply("leases", lease_object(NAMESPACE, LEASE, record))
    yield KubeLeaseApi(client, NAMESPACE, LEASE, 5.0)
    await client.close()


async def test_the_scheduler_follows_renewal_rotation_and_client_renewal(tmp_path: Path, lease_api) -> None:
    clock = FakeClock(start=1000.0)
    # limitguard's serving Secret (CA 1), the CA that will issue the next one (CA 2, not yet out),
    # the scheduler's client CA and certificate.
    first, second = ca_set(tmp_path / "ca1"), ca_set(tmp_path / "ca2")
    serving_dir = tmp_path / "serving"
    shutil.copytree(tmp_path / "ca1", serving_dir)
    clients = tmp_path / "clients"
    client_ca(clients / "ca-old", "scheduler-client-ca-1")
    client_ca(clients / "ca-new", "scheduler-client-ca-2")
    client_ca_file = tmp_path / "client-ca.crt"
    client_ca_file.write_bytes((clients / "ca-old" / "ca.crt").read_bytes())
    usage = [ExtendedKeyUsageOID.CLIENT_AUTH]
    client_pair(clients / "old", "tls", clients / "ca-old", CLIENT_NAME, [], usage)
    client_pair(clients / "new", "tls", clients / "ca-new", CLIENT_NAME, [], usage)

    services = app_services(worked_example(), CONFIG)
    services.peer_gates["extender"] = PeerGate("client authentication", client_ca_file, [CLIENT_NAME])

    async def never(seconds: float) -> None:  # the reloader checks when the test says so
        await clock.sleep(10**9)

    async with serving(services, serving_dir, reload_sleep=never) as served:
        assert served.reloader is not None
        pods: list[Pod] = []
        for name in ("sched-0", "sched-1"):
            root = tmp_path / name
            (root / "limitguard").mkdir(parents=True)
            project(serving_dir, root, "ca.crt")
            shutil.copytree(clients / "old", root / "client")
            scheduler = Scheduler(root, served.port)
            restarted: list[float] = []

            async def restart(scheduler: Scheduler = scheduler, restarted: list[float] = restarted) -> bool:
                restarted.append(clock.now())
                return await scheduler.restart()

            async def leads(name: str = name) -> bool:
                lease = await lease_api.get()
                return holder_is((lease or {}).get("spec", {}).get("holderIdentity"), name)

            settings = KeeperSettings(
                (root / "limitguard" / "ca.crt", root / "limitguard" / "upcoming-ca.crt"),
                root / "trust" / "ca.crt",
                (root / "client" / "tls.crt", root / "client" / "tls.key"),
                POLL,
                OVERLAP,
                LEADER_DELAY,
            )
            (root / "trust").mkdir()
            keeper = TrustKeeper(settings, clock, restart, leads, time.time)  # the certificates are valid now
            keeper.prepare()  # before kube-scheduler starts, as the native sidecar's startup probe orders
            scheduler.start()
            pods.append(Pod(name, scheduler, keeper, restarted))
        leader, follower = pods

        async def poll() -> None:
            clock.advance(POLL)
            for pod in pods:
                await pod.keeper.step()

        async def all_work() -> bool:
            return all([await pod.scheduler.filter() for pod in pods])

        assert await all_work()

        # 1. The serving certificate is renewed from the same CA: nothing to restart.
        renewed = certs.issue_with_ca(
            certs.service_hostnames(SERVICE, NAMESPACE), first.ca_cert, first.ca_key, 30
        )
        certs.write(renewed, serving_dir)
        assert served.reloader.check()
        for pod in pods:
            await pod.scheduler.restart()  # even fresh handshakes verify the new leaf with the old trust
            pod.restarted_at.clear()
        for _ in range(40):
            await poll()
        assert [pod.restarted_at for pod in pods] == [[], []] and await all_work()

        # 2a. The next CA is published (the chart mounts it as upcoming-ca.crt) long before it issues
        # anything: each pod's kubelet projects it at its own time; the follower restarts at once,
        # the leader after LEADER_DELAY.
        (tmp_path / "upcoming").mkdir()
        (tmp_path / "upcoming" / "upcoming-ca.crt").write_bytes(second.ca_cert)
        changed_at = {}
        for pod in (follower, leader):
            project(tmp_path / "upcoming", pod.scheduler.pod, "upcoming-ca.crt")
            changed_at[pod.name] = clock.now()
            await poll()
        while not leader.restarted_at:
            await poll()
        for pod in pods:
            (restart_time,) = pod.restarted_at
            assert restart_time - changed_at[pod.name] <= BOUND
        assert follower.restarted_at[0] < leader.restarted_at[0]  # the leader hands over last
        assert await all_work()

        # 2b. limitguard switches to a certificate from CA 2: both trusted, no failed call, no restart.
        shutil.copy(tmp_path / "ca2" / "tls.crt", serving_dir / "tls.crt")
        shutil.copy(tmp_path / "ca2" / "tls.key", serving_dir / "tls.key")
        shutil.copy(tmp_path / "ca2" / "ca.crt", serving_dir / "ca.crt")
        assert served.reloader.check()
        for pod in pods:
            pod.restarted_at.clear()
            await pod.scheduler.restart()  # new handshakes against the new serving certificate
        assert await all_work()
        project(serving_dir, follower.scheduler.pod, "ca.crt")
        await poll()
        project(serving_dir, leader.scheduler.pod, "ca.crt")
        dropped_from = clock.now()
        for pod in pods:
            pod.restarted_at.clear()
        for _ in range(int(OVERLAP / POLL) - 2):
            await poll()
            assert await all_work()
        assert [pod.restarted_at for pod in pods] == [[], []]  # CA 1 still trusted during the overlap
        # 2c. After the overlap CA 1 is dropped: one more restart each, the leader last.
        while not leader.restarted_at:
            await poll()
        assert follower.restarted_at[0] - dropped_from <= OVERLAP + BOUND
        assert leader.restarted_at[0] - follower.restarted_at[0] <= BOUND
        trusted = (leader.scheduler.pod / "trust" / "ca.crt").read_bytes()
        assert trusted == second.ca_cert and await all_work()

        # 3. The client certificate is renewed (a new client CA, both trusted by limitguard for now).
        client_ca_file.write_bytes(
            (clients / "ca-old" / "ca.crt").read_bytes() + (clients / "ca-new" / "ca.crt").read_bytes()
        )
        assert served.reloader.check()
        for pod in pods:
            pod.restarted_at.clear()
            shutil.copy(clients / "new" / "tls.crt", pod.scheduler.pod / "client" / "tls.crt")
            shutil.copy(clients / "new" / "tls.key", pod.scheduler.pod / "client" / "tls.key")
        renewed_at = clock.now()
        await poll()
        assert follower.restarted_at and not leader.restarted_at
        # Without its restart, the leader's kept-alive connection still presents the old certificate:
        # once limitguard stops trusting the old client CA, its calls fail.
        client_ca_file.write_bytes((clients / "ca-new" / "ca.crt").read_bytes())
        assert served.reloader.check()
        assert await follower.scheduler.filter()
        assert not await leader.scheduler.filter()
        while not leader.restarted_at:
            await poll()
        assert leader.restarted_at[0] - renewed_at <= BOUND
        assert await all_work()
        for pod in pods:
            assert pod.scheduler.session is not None
            await pod.scheduler.session.close()
