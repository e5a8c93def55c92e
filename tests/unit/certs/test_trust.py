"""The scheduler's trust keeper on a `generate` mode ca.crt: a renewal's replaced CA is trusted until
the overlap after the new CA was made, then dropped once, by every keeper alike (time is injected)."""

from __future__ import annotations

import math
from pathlib import Path

from cryptography import x509

from limitguard.certs import generate as certs
from limitguard.certs.renewal import made_at
from limitguard.certs.trust import KeeperSettings, TrustKeeper
from limitguard.testing.clock import FakeClock

HOSTS = certs.service_hostnames("limitguard", "limitguard")
POLL, OVERLAP = 2.0, 600.0


class Keeper:
    """A TrustKeeper on *ca_file*, its kube-scheduler restarts counted; wall time follows the clock."""

    def __init__(self, root: Path, ca_file: Path, clock: FakeClock, wall_start: float) -> None:
        self.restarts: list[float] = []
        self.clock = clock
        settings = KeeperSettings((), root / "bundle.crt", (), POLL, OVERLAP, 0.0, (ca_file,))

        async def restart() -> bool:
            self.restarts.append(clock.now())
            return True

        async def leads() -> bool:
            return False

        self.keeper = TrustKeeper(settings, clock, restart, leads, lambda: wall_start + clock.now())
        self.bundle_file = settings.bundle_file

    def trusted(self) -> list[x509.Certificate]:
        return x509.load_pem_x509_certificates(self.bundle_file.read_bytes())

    async def polls(self, count: int) -> None:
        for _ in range(count):
            self.clock.advance(POLL)
            await self.keeper.step()


def ca(certificates: certs.CertificateSet) -> x509.Certificate:
    return x509.load_pem_x509_certificate(certificates.ca_cert)


async def test_a_renewals_replaced_ca_is_dropped_once_its_overlap_is_over(tmp_path: Path) -> None:
    old, new = certs.generate(HOSTS), certs.generate(HOSTS)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(old.ca_cert)
    clock = FakeClock()
    wall_start = made_at(ca(new)) - 100.0  # the pod starts 100 s before the renewal makes the new CA
    pod = Keeper(tmp_path / "pod", ca_file, clock, wall_start)
    (tmp_path / "pod").mkdir()
    pod.keeper.prepare()
    assert pod.trusted() == [ca(old)]

    await pod.polls(60)  # the renewal: the new Secret's ca.crt is the new CA, then the old one
    ca_file.write_bytes(new.ca_cert + old.ca_cert)
    await pod.polls(1)
    assert len(pod.restarts) == 1 and sorted(pod.trusted(), key=fingerprint) == sorted(
        [ca(new), ca(old)], key=fingerprint
    )
    cutoff = made_at(ca(new)) + OVERLAP - wall_start  # on the clock
    await pod.polls(math.ceil((cutoff - clock.now()) / POLL) - 1)
    assert clock.now() < cutoff and len(pod.restarts) == 1  # trusted through the overlap
    await pod.polls(1)
    assert len(pod.restarts) == 2 and pod.trusted() == [ca(new)]  # then dropped at once
    await pod.polls(int(2 * OVERLAP / POLL))
    assert len(pod.restarts) == 2  # not kept again as a CA that left the inputs

    # A pod that starts after the overlap never trusts the replaced CA, and restarts for nothing.
    late = Keeper(tmp_path / "late", ca_file, clock, wall_start)
    (tmp_path / "late").mkdir()
    late.keeper.prepare()
    await late.polls(5)
    assert late.trusted() == [ca(new)] and late.restarts == []


async def test_a_renewal_that_carried_no_ca_keeps_the_old_one_as_a_ca_that_left(tmp_path: Path) -> None:
    """Without webhook configurations to read the old CA from, ca.crt holds the new CA alone: the
    old one is still trusted for the overlap from the moment it left the file."""
    old, new = certs.generate(HOSTS), certs.generate(HOSTS)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(old.ca_cert)
    clock = FakeClock()
    (tmp_path / "pod").mkdir()
    pod = Keeper(tmp_path / "pod", ca_file, clock, made_at(ca(new)))
    pod.keeper.prepare()
    ca_file.write_bytes(new.ca_cert)
    await pod.polls(1)
    left = clock.now()
    assert len(pod.restarts) == 1 and len(pod.trusted()) == 2
    await pod.polls(int(OVERLAP / POLL))
    assert pod.trusted() == [ca(new)] and pod.restarts[-1] - left >= OVERLAP


def fingerprint(certificate: x509.Certificate) -> bytes:
    return certificate.tbs_certificate_bytes
