"""A model of the chart's second scheduler for the certificate tests: kube-scheduler's extender client
and the pod's mounted files, kept by a real TrustKeeper.

The model does what kube-scheduler does (pkg/scheduler/extender.go makeTransport, client-go
rest.TLSConfigFor): its caFile is read once, at start, into a fixed trust; its client certificate
files are read again for each new TLS handshake; a kept-alive connection keeps its certificate.
"""

from __future__ import annotations

import datetime
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from limitguard.certs import generate as certs
from limitguard.certs.trust import KeeperSettings, TrustKeeper
from limitguard.cli.schedulertrust import holder_is
from limitguard.core.config import Config, LimitAwareConfig
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.testing.clock import FakeClock
from tests.integration.extender.shapes import args_names, scheduler_pod

NAMESPACE, LEASE = "limitguard", "limitguard-scheduler"
SERVICE = "limitguard"
HOSTNAME = f"{SERVICE}.{NAMESPACE}.svc"
CLIENT_NAME = "limitguard-scheduler"
POLL, LEADER_DELAY, OVERLAP = 2.0, 60.0, 600.0  # the chart's defaults
CONFIG = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 125}))


class Scheduler:
    """One kube-scheduler's extender client: trust fixed at start, client files read per handshake.
    Without *keep_alive* every call makes a new connection (a handshake against the trust)."""

    def __init__(self, pod: Path, port: int, keep_alive: bool = True) -> None:
        self.pod, self.port, self.keep_alive = pod, port, keep_alive
        self.session: aiohttp.ClientSession | None = None
        self.starts = 0

    def start(self) -> None:
        context = ssl.create_default_context(cadata=(self.pod / "trust" / "ca.crt").read_text())
        self.context = context
        connector = aiohttp.TCPConnector(ssl=context, force_close=not self.keep_alive)
        self.session = aiohttp.ClientSession(connector=connector)
        self.starts += 1

    async def restart(self) -> bool:
        assert self.session is not None
        await self.session.close()
        self.start()
        return True

    async def filter(self, port: int | None = None) -> bool:
        """One filter call on the kept-alive connection (a new one when none is open) to *port*
        (default: the one given at start)."""
        assert self.session is not None
        self.context.load_cert_chain(self.pod / "client" / "tls.crt", self.pod / "client" / "tls.key")
        try:
            async with self.session.post(
                f"https://127.0.0.1:{port or self.port}/extender/filter",
                json=args_names(scheduler_pod(), ["node1", "node2"]),
                server_hostname=HOSTNAME,
            ) as response:
                return response.status == 200 and (await response.json())["nodenames"] == ["node2"]
        except (aiohttp.ClientError, ssl.SSLError):
            return False

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()


@dataclass
class Pod:
    """A replica of the second scheduler: its mounted files, its kube-scheduler and its keeper."""

    name: str
    scheduler: Scheduler
    keeper: TrustKeeper
    restarted_at: list[float]


def scheduler_pod_on(
    root: Path,
    name: str,
    port: int,
    clock: FakeClock,
    leases: KubeLeaseApi,
    *,
    ca_files: tuple[str, ...] = (),
    renewal_ca_files: tuple[str, ...] = (),
    wall_time: Callable[[], float] = time.time,
    on_restart: Callable[[str], Awaitable[None]] | None = None,
    keep_alive: bool = True,
) -> Pod:
    """A scheduler pod whose files are under *root*/*name* (its `limitguard/` mounts the Secret's
    files named by *ca_files* and *renewal_ca_files*, `client/` its client pair), its keeper
    started as the native sidecar starts it: before kube-scheduler. *on_restart* runs after each
    restart (a Lease handover); *keep_alive* as Scheduler takes it."""
    directory = root / name
    scheduler = Scheduler(directory, port, keep_alive)
    restarted: list[float] = []

    async def restart() -> bool:
        restarted.append(clock.now())
        await scheduler.restart()
        if on_restart is not None:
            await on_restart(name)
        return True

    async def leads() -> bool:
        lease = await leases.get()
        return holder_is((lease or {}).get("spec", {}).get("holderIdentity"), name)

    settings = KeeperSettings(
        tuple(directory / "limitguard" / file for file in ca_files),
        directory / "trust" / "ca.crt",
        (directory / "client" / "tls.crt", directory / "client" / "tls.key"),
        POLL,
        OVERLAP,
        LEADER_DELAY,
        tuple(directory / "limitguard" / file for file in renewal_ca_files),
    )
    (directory / "trust").mkdir(parents=True, exist_ok=True)
    keeper = TrustKeeper(settings, clock, restart, leads, wall_time)
    keeper.prepare()  # before kube-scheduler starts, as the native sidecar's startup probe orders
    scheduler.start()
    return Pod(name, scheduler, keeper, restarted)


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
