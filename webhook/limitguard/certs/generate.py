"""Certificates for the webhook's TLS endpoint: a private CA and a serving certificate.

The apiserver only talks to webhooks over TLS and verifies the serving certificate against the
`caBundle` of the webhook configuration, so the CA is kept beside the serving pair. The same pair is
the replicas' client certificate when a follower forwards to its leader (mutual TLS), so it carries
both the serverAuth and the clientAuth extended key usage.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from limitguard.errors import LimitguardError

CA_CERT, CA_KEY, TLS_CERT, TLS_KEY = "ca.crt", "ca.key", "tls.crt", "tls.key"
# serverAuth for the apiserver and kube-scheduler; clientAuth for a follower presenting it to its leader.
SERVING_USAGES = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
# notBefore lies this far before the moment a certificate is made, so a node whose clock is behind
# accepts it at once; the moment it was made is therefore notBefore + BACKDATE
# (limitguard.certs.renewal reads it so).
BACKDATE = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class CertificateSet:
    ca_cert: bytes
    ca_key: bytes
    tls_cert: bytes
    tls_key: bytes


def service_hostnames(service: str, namespace: str) -> list[str]:
    """The names the apiserver may use to reach a Service-backed webhook."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64])])


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _validity(valid_days: int) -> tuple[datetime.datetime, datetime.datetime]:
    now = datetime.datetime.now(datetime.UTC)
    return now - BACKDATE, now + datetime.timedelta(days=valid_days)


def _new_ca(valid_days: int) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    not_before, not_after = _validity(valid_days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("limitguard-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return ca_cert, ca_key


def _serving(
    hostnames: list[str], ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, valid_days: int
) -> CertificateSet:
    not_before, not_after = _validity(valid_days)
    names: list[x509.GeneralName] = []
    for host in hostnames:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    tls_key = ec.generate_private_key(ec.SECP256R1())
    tls_cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hostnames[0]))
        .issuer_name(ca_cert.subject)
        .public_key(tls_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(min(not_after, ca_cert.not_valid_after_utc))  # never outlive the CA
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage(SERVING_USAGES), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return CertificateSet(
        ca_cert.public_bytes(pem), _key_pem(ca_key), tls_cert.public_bytes(pem), _key_pem(tls_key)
    )


def generate(hostnames: list[str], valid_days: int = 365) -> CertificateSet:
    """A fresh CA and a serving certificate for *hostnames* (DNS names or IP addresses)."""
    ca_cert, ca_key = _new_ca(valid_days)
    return _serving(hostnames, ca_cert, ca_key, valid_days)


class CAError(LimitguardError, ValueError):
    """An existing CA that cannot sign: unreadable, not a CA, key mismatch or expired."""


def issue_with_ca(
    hostnames: list[str], ca_cert_pem: bytes, ca_key_pem: bytes, valid_days: int = 365
) -> CertificateSet:
    """A new serving certificate signed by an existing CA (the webhooks' caBundle stays valid)."""
    try:
        ca_cert = x509.load_pem_x509_certificate(ca_cert_pem)
        ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    except ValueError as error:
        raise CAError(f"cannot load the CA: {error}") from None
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise CAError("the CA key is not an EC key (limitguard's CAs are P-256)")
    spki = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if ca_key.public_key().public_bytes(*spki) != ca_cert.public_key().public_bytes(*spki):
        raise CAError("ca.key does not belong to ca.crt")
    try:
        constraints = ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        constraints = None
    if constraints is None or not constraints.ca:
        raise CAError("ca.crt is not a CA certificate")
    if ca_cert.not_valid_after_utc <= datetime.datetime.now(datetime.UTC):
        raise CAError(f"ca.crt expired on {ca_cert.not_valid_after_utc:%Y-%m-%d}")
    return _serving(hostnames, ca_cert, ca_key, valid_days)


def write_file(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (readers never see half a file) with *mode* from the first byte."""
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def write(certificates: CertificateSet, directory: str | Path) -> None:
    """Write the set; private keys are 0600, the serving key is replaced last... and atomically."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_file(out / CA_CERT, certificates.ca_cert, 0o644)
    write_file(out / CA_KEY, certificates.ca_key, 0o600)
    write_file(out / TLS_KEY, certificates.tls_key, 0o600)
    write_file(out / TLS_CERT, certificates.tls_cert, 0o644)


def ensure_serving_certificates(directory: str | Path, hostnames: list[str]) -> bool:
    """Use `tls.crt`/`tls.key` in *directory* when present, else generate a self-signed set there.

    Returns True when new certificates were generated.
    """
    out = Path(directory)
    if (out / TLS_CERT).exists() and (out / TLS_KEY).exists():
        return False
    write(generate(hostnames), out)
    return True


def _san_names(certificate: x509.Certificate) -> list[str]:
    """The certificate's DNS and IP subject alternative names, in their order."""
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [str(name.value) for name in names if isinstance(name, (x509.DNSName, x509.IPAddress))]


def _name_key(host: str) -> str:
    """IP addresses compare by value (`::1` and `0:0::1` are one), DNS names without case."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def reissue_for_names(directory: str | Path, hostnames: list[str]) -> list[str]:
    """When the self-signed serving certificate in *directory* lacks some of *hostnames*, sign a new
    one for its old names and those with the CA beside it (ca.crt stays, so clients trusting it keep
    working); returns the names added. A certificate that CA did not issue (one provided, or a
    mounted Secret without ca.key) is never touched: [] then, as when nothing is missing.
    """
    out = Path(directory)
    ca_cert_file, ca_key_file = out / CA_CERT, out / CA_KEY
    if not (ca_cert_file.exists() and ca_key_file.exists()):
        return []
    serving = x509.load_pem_x509_certificate((out / TLS_CERT).read_bytes())
    names = _san_names(serving)
    covered = {_name_key(name) for name in names}
    missing = [host for host in hostnames if _name_key(host) not in covered]
    if not missing:
        return []
    ca_cert_pem = ca_cert_file.read_bytes()
    try:
        serving.verify_directly_issued_by(x509.load_pem_x509_certificate(ca_cert_pem))
    except (ValueError, TypeError, InvalidSignature):
        return []
    reissued = issue_with_ca([*names, *missing], ca_cert_pem, ca_key_file.read_bytes())
    write_file(out / TLS_KEY, reissued.tls_key, 0o600)
    write_file(out / TLS_CERT, reissued.tls_cert, 0o644)
    return missing
