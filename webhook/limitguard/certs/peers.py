"""Who a verified TLS client certificate belongs to: its issuer and its names.

OpenSSL verifies a client certificate's chain against every CA the server context trusts (the
replicas' CA and, when configured, the apiserver's client CA) and its clientAuth usage. A route
then asks a narrower question: was this certificate issued by *its* CA, and does it carry one of
the names that route admits? A shared issuer (one cert-manager ClusterIssuer signing many
workloads' certificates) makes the CA alone prove nothing, hence the names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from limitguard.errors import LimitguardError

MAX_SHOWN_NAMES = 4  # names echoed in a refusal (a certificate may carry hundreds)


class PeerCAError(LimitguardError, ValueError):
    """A CA bundle that cannot be read or holds no certificate."""


def load_issuers(path: Path) -> tuple[x509.Certificate, ...]:
    """Every certificate of a PEM bundle (a rotation may hold the old and the new CA)."""
    try:
        issuers = tuple(x509.load_pem_x509_certificates(path.read_bytes()))
    except (OSError, ValueError) as error:
        raise PeerCAError(f"cannot read the CA bundle {path}: {error}") from None
    if not issuers:
        raise PeerCAError(f"{path} holds no PEM certificate")
    return issuers


def certificate_names(certificate: x509.Certificate) -> list[str]:
    """The subject's common names, then the DNS, URI and IP subject alternative names."""
    names = [str(a.value) for a in certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    try:
        alternatives = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return names
    names += alternatives.get_values_for_type(x509.DNSName)
    names += alternatives.get_values_for_type(x509.UniformResourceIdentifier)
    names += [str(address) for address in alternatives.get_values_for_type(x509.IPAddress)]
    return names


def _issued_by(certificate: x509.Certificate, issuers: Iterable[x509.Certificate]) -> bool:
    for issuer in issuers:
        try:
            certificate.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature):
            continue
        return True
    return False


def has_client_usage(certificate: x509.Certificate) -> bool:
    """No extended key usage means any usage (RFC 5280 4.2.1.12), as OpenSSL reads it."""
    try:
        usages = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return ExtendedKeyUsageOID.CLIENT_AUTH in usages


@dataclass(frozen=True)
class TrustedPeers:
    """Certificates issued directly by one of *issuers* and naming one of *names* (CN or SAN)."""

    issuers: tuple[x509.Certificate, ...]
    names: frozenset[str]

    def problem(self, der: bytes | None) -> str | None:
        """Why the client certificate *der* is not one of these peers; None when it is."""
        if not der:
            return "a client certificate is required"
        try:
            certificate = x509.load_der_x509_certificate(der)
        except ValueError:
            return "the client certificate cannot be read"
        if not _issued_by(certificate, self.issuers):
            return "the client certificate is not issued by the CA this route trusts"
        if not has_client_usage(certificate):
            return "the client certificate lacks the clientAuth usage"
        names = certificate_names(certificate)
        if self.names.isdisjoint(names):
            shown = ", ".join(name[:64] for name in list(dict.fromkeys(names))[:MAX_SHOWN_NAMES]) or "none"
            return f"the client certificate's names ({shown}) are not admitted on this route"
        return None


def _serving_certificate(cert_file: Path) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(cert_file.read_bytes())
    except (OSError, ValueError) as error:
        raise PeerCAError(f"cannot read the serving certificate {cert_file}: {error}") from None


def own_peer_name(cert_file: Path) -> str:
    """The name replicas expect of each other when none is configured: the first DNS name of the
    serving certificate they all mount (its common name when it has no DNS name)."""
    certificate = _serving_certificate(cert_file)
    try:
        alternatives = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = alternatives.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        dns = []
    return dns[0] if dns else (certificate_names(certificate) or [""])[0]


def serving_pair_problem(cert_file: Path, peer_name: str) -> str | None:
    """Why the serving certificate cannot be the replicas' client certificate, or None."""
    certificate = _serving_certificate(cert_file)
    if not has_client_usage(certificate):
        return (
            f"{cert_file} lacks the clientAuth extended key usage (issue it with the client auth usage, "
            "or let the chart's generate mode create a new Secret)"
        )
    if peer_name not in certificate_names(certificate):
        return f"{cert_file} does not carry the peer name {peer_name!r}"
    return None


def serves_as_client(cert_pem: bytes) -> bool:
    """Whether a serving certificate can also be a replica's client certificate (clientAuth usage)."""
    return has_client_usage(x509.load_pem_x509_certificate(cert_pem))
