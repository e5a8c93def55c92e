"""Certificate directories and client pairs for the authentication tests (real keys, real TLS)."""

from __future__ import annotations

from pathlib import Path

from cryptography.x509.oid import ExtendedKeyUsageOID

from limitguard.certs import generate as certs
from limitguard.testing.clientcerts import client_context, client_pair

__all__ = ["CLIENT", "SERVER_ONLY", "certificate_dir", "client_context", "client_pair"]

PEER_NAME = "limitguard.limitguard-system.svc"  # what the chart passes as --peer-server-name
SERVING_NAMES = [PEER_NAME, "localhost", "127.0.0.1"]


def certificate_dir(directory: Path) -> Path:
    """ca.crt, ca.key, tls.crt, tls.key as `limitguard certs` writes them, for the Service and localhost."""
    certs.write(certs.generate(SERVING_NAMES), directory)
    return directory


CLIENT = [ExtendedKeyUsageOID.CLIENT_AUTH]
SERVER_ONLY = [ExtendedKeyUsageOID.SERVER_AUTH]
