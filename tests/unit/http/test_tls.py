"""The server's TLS context: what any client that reaches the port may negotiate."""

from __future__ import annotations

import ssl
from pathlib import Path

from limitguard.certs import generate as certs
from limitguard.http.tls import server_context


def test_the_server_context_refuses_renegotiation(cert_dir: Path) -> None:
    """OpenSSL 1.1.1 accepts a TLS 1.2 client's renegotiation unless told not to (3.0 refuses it by
    default): a client would make the server run handshake after handshake on one connection."""
    for client_cas in ((), (cert_dir / certs.CA_CERT,)):
        context = server_context(cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY, client_cas)
        assert context.options & ssl.OP_NO_RENEGOTIATION
