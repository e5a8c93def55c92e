"""Serving certificates double as the replicas' client certificates; `TrustedPeers` judges issuer,
usage and names (RFC 5280 4.2.1.12: no extended key usage means any usage)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID

from limitguard.certs import generate as certs
from limitguard.certs.peers import (
    PeerCAError,
    TrustedPeers,
    load_issuers,
    own_peer_name,
    serving_pair_problem,
)

NAMES = ["limitguard.ns.svc", "localhost"]


def usages(pem: bytes) -> list[x509.ObjectIdentifier]:
    certificate = x509.load_pem_x509_certificate(pem)
    return list(certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


def test_generated_and_reissued_serving_certificates_carry_server_and_client_auth() -> None:
    fresh = certs.generate(NAMES)
    reissued = certs.issue_with_ca(["other.svc"], fresh.ca_cert, fresh.ca_key)
    for pem in (fresh.tls_cert, reissued.tls_cert):
        assert usages(pem) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]


def test_trusted_peers_need_the_issuer_and_a_name(tmp_path: Path) -> None:
    ours, theirs = certs.generate(NAMES), certs.generate(NAMES)
    (tmp_path / "ca.crt").write_bytes(ours.ca_cert)
    peers = TrustedPeers(load_issuers(tmp_path / "ca.crt"), frozenset(["limitguard.ns.svc"]))
    der = x509.load_pem_x509_certificate(ours.tls_cert).public_bytes(Encoding.DER)
    foreign = x509.load_pem_x509_certificate(theirs.tls_cert).public_bytes(Encoding.DER)
    other_name = certs.issue_with_ca(["intruder.svc"], ours.ca_cert, ours.ca_key).tls_cert
    other_der = x509.load_pem_x509_certificate(other_name).public_bytes(Encoding.DER)

    assert peers.problem(der) is None
    assert peers.problem(None) == "a client certificate is required"
    assert peers.problem(b"not a certificate") == "the client certificate cannot be read"
    assert peers.problem(foreign) == "the client certificate is not issued by the CA this route trusts"
    assert (
        peers.problem(other_der)
        == "the client certificate's names (intruder.svc) are not admitted on this route"
    )


def test_own_peer_name_and_the_serving_pair_check(tmp_path: Path) -> None:
    certs.write(certs.generate(NAMES), tmp_path)
    assert own_peer_name(tmp_path / "tls.crt") == "limitguard.ns.svc"
    assert serving_pair_problem(tmp_path / "tls.crt", "limitguard.ns.svc") is None
    assert "does not carry the peer name 'x.svc'" in (
        serving_pair_problem(tmp_path / "tls.crt", "x.svc") or ""
    )


def test_a_bundle_without_certificates_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.crt").write_text("nothing here\n")
    with pytest.raises(PeerCAError, match=r"holds no PEM certificate|cannot read"):
        load_issuers(tmp_path / "empty.crt")
    with pytest.raises(PeerCAError, match="cannot read"):
        load_issuers(tmp_path / "missing.crt")
