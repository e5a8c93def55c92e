"""The certificate reloader's timing: a pair from the same CA at once, one from a new CA after the
delay (never past the served certificate's expiry), the CA bundles at once. Checks run when the test
calls them; the delay is measured on an injected clock."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509

from limitguard.certs import generate as certs
from limitguard.http.tls import CertificateReloader, server_context
from limitguard.testing.clock import FakeClock

HOSTS = ["localhost", "127.0.0.1"]
DELAY = 180.0


class Watched:
    """A cert dir served through a reloader, and what its listeners were told."""

    def __init__(self, cert_dir: Path, clock: FakeClock, wall_time: float) -> None:
        self.dir = cert_dir
        self.told: list[str] = []
        files = cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY
        ca = cert_dir / certs.CA_CERT
        self.reloader = CertificateReloader(
            server_context(*files, [ca]),
            *files,
            client_cas=[ca],
            trust_listeners=[lambda: self.told.append("trust")],
            pair_listeners=[lambda: self.told.append("pair")],
            clock=clock,
            wall_time=lambda: wall_time + clock.now(),
            new_ca_delay=DELAY,
        )


def served_at_start(tmp_path: Path) -> tuple[certs.CertificateSet, float]:
    first = certs.generate(HOSTS)
    certs.write(first, tmp_path)
    start = x509.load_pem_x509_certificate(first.tls_cert).not_valid_before_utc.timestamp() + 3600
    return first, start


def test_a_pair_from_the_same_ca_loads_at_the_next_check(tmp_path: Path) -> None:
    first, wall = served_at_start(tmp_path)
    watched = Watched(tmp_path, FakeClock(), wall)
    certs.write(certs.issue_with_ca(HOSTS, first.ca_cert, first.ca_key, 30), tmp_path)
    assert watched.reloader.check() and watched.reloader.reloads == 1
    assert watched.told == ["pair"] and watched.reloader.switch_due is None


def test_a_pair_from_a_new_ca_waits_while_its_ca_is_trusted_at_once(tmp_path: Path) -> None:
    first, wall = served_at_start(tmp_path)
    clock = FakeClock()
    watched = Watched(tmp_path, clock, wall)
    renewed = certs.generate(HOSTS)
    certs.write(renewed, tmp_path)
    (tmp_path / certs.CA_CERT).write_bytes(renewed.ca_cert + first.ca_cert)  # as the renewal writes it
    assert watched.reloader.check()  # the bundle: the route checks and the forwarder trust both now
    assert watched.told == ["trust"] and watched.reloader.reloads == 0
    assert watched.reloader.switch_due == DELAY
    clock.advance(DELAY - 1)
    assert not watched.reloader.check() and watched.reloader.reloads == 0
    clock.advance(1)
    assert watched.reloader.check() and watched.reloader.reloads == 1
    assert watched.told == ["trust", "pair"] and watched.reloader.switch_due is None
    clock.advance(DELAY)
    assert not watched.reloader.check()  # nothing new


def test_another_new_pair_starts_the_wait_again_and_the_old_one_back_cancels_it(tmp_path: Path) -> None:
    first, wall = served_at_start(tmp_path)
    clock = FakeClock()
    watched = Watched(tmp_path, clock, wall)
    certs.write(certs.generate(HOSTS), tmp_path)
    watched.reloader.check()
    clock.advance(100)
    certs.write(certs.generate(HOSTS), tmp_path)  # a second renewal before the first was served
    watched.reloader.check()
    assert watched.reloader.switch_due == 100 + DELAY
    certs.write(first, tmp_path)  # back to what is served
    watched.reloader.check()
    assert watched.reloader.switch_due is None
    clock.advance(2 * DELAY)
    watched.reloader.check()
    assert watched.reloader.reloads == 0


def test_the_wait_ends_when_the_served_certificate_expires(tmp_path: Path) -> None:
    first, _ = served_at_start(tmp_path)
    expiry = x509.load_pem_x509_certificate(first.tls_cert).not_valid_after_utc.timestamp()
    clock = FakeClock()
    watched = Watched(tmp_path, clock, expiry - 30)
    certs.write(certs.generate(HOSTS), tmp_path)
    watched.reloader.check()
    assert watched.reloader.switch_due == 30
    clock.advance(30)
    assert watched.reloader.check() and watched.reloader.reloads == 1


def test_a_pair_that_does_not_load_when_due_is_tried_again(tmp_path: Path) -> None:
    """A mismatched pair (a certificate written before its key) is not served, and is retried."""
    _, wall = served_at_start(tmp_path)
    clock = FakeClock()
    watched = Watched(tmp_path, clock, wall)
    renewed = certs.generate(HOSTS)
    certs.write_file(tmp_path / certs.TLS_CERT, renewed.tls_cert, 0o644)  # the key still the old one
    watched.reloader.check()
    clock.advance(DELAY)
    assert not watched.reloader.check() and watched.reloader.reloads == 0
    certs.write_file(tmp_path / certs.TLS_KEY, renewed.tls_key, 0o600)  # the wait counts from the certificate
    assert watched.reloader.check() and watched.reloader.reloads == 1
