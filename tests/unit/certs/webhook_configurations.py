"""Webhook configurations and their caBundles, for the certs tests (unit and end to end)."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509

SERVICE, NS = "limitguard", "limitguard-system"  # the Service the certificates are for


def configuration(*names: str, ca_bundle: str | None = None) -> dict[str, Any]:
    hooks = []
    for name in names:
        client_config: dict[str, Any] = {"service": {"name": SERVICE, "namespace": NS, "path": "/validate"}}
        if ca_bundle is not None:
            client_config["caBundle"] = ca_bundle
        hooks.append({"name": name, "clientConfig": client_config})
    return {"metadata": {"name": SERVICE}, "webhooks": hooks}


def bundle_of(config: dict[str, Any], index: int = 0) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(
        base64.b64decode(config["webhooks"][index]["clientConfig"]["caBundle"])
    )
