"""A self-signed set made for one --host gets a serving certificate for another, from the same CA;
a certificate that CA did not issue is never replaced."""

from __future__ import annotations

import stat

from cryptography import x509

from limitguard.certs import generate as certs


def names(directory) -> list[str]:
    certificate = x509.load_pem_x509_certificate((directory / certs.TLS_CERT).read_bytes())
    extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return [str(name.value) for name in extension]


def test_a_missing_host_is_added_with_the_same_ca(tmp_path):
    certs.write(certs.generate(["localhost", "127.0.0.1", "::1"]), tmp_path)
    ca_before = (tmp_path / certs.CA_CERT).read_bytes()
    assert certs.reissue_for_names(tmp_path, ["192.0.2.7"]) == ["192.0.2.7"]
    assert names(tmp_path) == ["localhost", "127.0.0.1", "::1", "192.0.2.7"]
    assert (tmp_path / certs.CA_CERT).read_bytes() == ca_before
    ca = x509.load_pem_x509_certificate(ca_before)
    x509.load_pem_x509_certificate((tmp_path / certs.TLS_CERT).read_bytes()).verify_directly_issued_by(ca)
    assert stat.S_IMODE((tmp_path / certs.TLS_KEY).stat().st_mode) == 0o600
    # named already (IPs by value, DNS names in any case): nothing is written
    before = (tmp_path / certs.TLS_CERT).read_bytes()
    assert certs.reissue_for_names(tmp_path, ["LOCALHOST", "0:0::1", "192.0.2.7"]) == []
    assert (tmp_path / certs.TLS_CERT).read_bytes() == before


def test_a_certificate_another_ca_issued_or_without_its_ca_key_is_left_alone(tmp_path):
    provided = tmp_path / "provided"
    certs.write(certs.generate(["limitguard.limitguard.svc"]), provided)
    (provided / certs.CA_KEY).unlink()  # a mounted Secret: ca.crt, tls.crt, tls.key
    before = (provided / certs.TLS_CERT).read_bytes()
    assert certs.reissue_for_names(provided, ["192.0.2.7"]) == []
    mixed = tmp_path / "mixed"
    certs.write(certs.generate(["localhost"]), mixed)
    other = certs.generate(["elsewhere"])
    (mixed / certs.CA_CERT).write_bytes(other.ca_cert)
    (mixed / certs.CA_KEY).write_bytes(other.ca_key)
    assert certs.reissue_for_names(mixed, ["192.0.2.7"]) == []
    assert (provided / certs.TLS_CERT).read_bytes() == before
    assert names(mixed) == ["localhost"]
