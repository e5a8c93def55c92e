"""Client certificates issued by a test CA: for the tests and benchmarks of client authentication."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from limitguard.certs import generate as certs


def client_pair(
    directory: Path,
    name: str,
    ca_dir: Path,
    common_name: str,
    dns_names: list[str],
    usages: list[x509.ObjectIdentifier],
) -> tuple[Path, Path]:
    """A client certificate issued by the CA in *ca_dir*, with the given names and extended key usages."""
    ca_cert = x509.load_pem_x509_certificate((ca_dir / certs.CA_CERT).read_bytes())
    ca_key = serialization.load_pem_private_key((ca_dir / certs.CA_KEY).read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    )
    if dns_names:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(dns) for dns in dns_names]), critical=False
        )
    certificate = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    directory.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


def client_context(ca_dir: Path, pair: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    """Trusts the server's CA; presents *pair* when given."""
    context = ssl.create_default_context(cafile=str(ca_dir / certs.CA_CERT))
    if pair is not None:
        context.load_cert_chain(*pair)
    return context
