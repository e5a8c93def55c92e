"""The rules of a CA renewal: which replaced CAs are still in force, and when a new pair is served."""

from __future__ import annotations

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

from limitguard.certs import generate as certs
from limitguard.certs.renewal import issuer_changed, made_at, split_renewal_bundle, switch_delay

HOSTS = certs.service_hostnames("limitguard", "limitguard")
OVERLAP = 600.0


def leaf(certificates: certs.CertificateSet) -> x509.Certificate:
    return x509.load_pem_x509_certificate(certificates.tls_cert)


def ca(certificates: certs.CertificateSet) -> x509.Certificate:
    return x509.load_pem_x509_certificate(certificates.ca_cert)


def test_replaced_cas_are_in_force_until_the_overlap_after_the_new_one_was_made() -> None:
    new, old, older = (ca(certs.generate(HOSTS)) for _ in range(3))
    made = made_at(new)
    assert abs(made - new.not_valid_before_utc.timestamp() - certs.BACKDATE.total_seconds()) < 1e-6
    bundle = [new, old, older]
    assert split_renewal_bundle(bundle, made, OVERLAP) == (bundle, [])
    assert split_renewal_bundle(bundle, made + OVERLAP - 1, OVERLAP) == (bundle, [])
    assert split_renewal_bundle(bundle, made + OVERLAP, OVERLAP) == ([new], [old, older])
    assert split_renewal_bundle([new], made + 10 * OVERLAP, OVERLAP) == ([new], [])  # the issuing CA stays
    assert split_renewal_bundle([], made, OVERLAP) == ([], [])


def test_a_pair_from_the_same_ca_is_served_at_once_one_from_a_new_ca_after_the_delay() -> None:
    first = certs.generate(HOSTS)
    renewed = certs.issue_with_ca(HOSTS, first.ca_cert, first.ca_key, 30)  # same CA key
    other = certs.generate(HOSTS)
    served = leaf(first)
    now = served.not_valid_before_utc.timestamp() + 3600
    assert not issuer_changed(served, leaf(renewed)) and issuer_changed(served, leaf(other))
    assert switch_delay(served, leaf(renewed), 180, now) == 0
    assert switch_delay(served, leaf(other), 180, now) == 180
    assert switch_delay(served, leaf(other), 0, now) == 0  # no delay configured
    assert switch_delay(None, leaf(other), 180, now) == 0  # nothing served yet to compare with
    # Never past the moment the served certificate expires: an expired one helps nobody.
    expiry = served.not_valid_after_utc.timestamp()
    assert switch_delay(served, leaf(other), 180, expiry - 30) == 30
    assert switch_delay(served, leaf(other), 180, expiry + 30) == 0


def test_without_authority_key_identifiers_the_issuer_name_decides() -> None:
    """A certificate without the extension (some CAs omit it) is compared by its issuer's name."""
    first, other = certs.generate(HOSTS), certs.generate(HOSTS)
    served, new = leaf(first), leaf(other)
    assert issuer_changed(served, new)  # two generated CAs share a name, not a key
    bare = x509.load_pem_x509_certificate(strip_authority_key(first))
    assert not issuer_changed(bare, new)  # the same name: taken as the same CA
    renamed = x509.load_pem_x509_certificate(strip_authority_key(first, issuer="someone-else"))
    assert issuer_changed(renamed, new)


def strip_authority_key(certificates: certs.CertificateSet, issuer: str | None = None) -> bytes:
    """The serving certificate re-signed without its authority key identifier (and another issuer name)."""
    original = leaf(certificates)
    key = serialization.load_pem_private_key(certificates.ca_key, password=None)
    name = original.issuer
    if issuer is not None:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(original.subject)
        .issuer_name(name)
        .public_key(original.public_key())
        .serial_number(original.serial_number)
        .not_valid_before(original.not_valid_before_utc)
        .not_valid_after(original.not_valid_after_utc)
    )
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)  # type: ignore[arg-type]
