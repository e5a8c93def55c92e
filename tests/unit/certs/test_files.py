"""Private keys are written 0600 whatever was left on disk before."""

from __future__ import annotations

import stat

from limitguard.certs import cluster as certs_cluster
from limitguard.certs import generate as certs


def test_a_stale_world_readable_temporary_file_does_not_leak_into_the_key(tmp_path):
    generated = certs.generate(["localhost"])
    stale = tmp_path / f".{certs.TLS_KEY}.tmp"
    stale.write_bytes(b"old")
    stale.chmod(0o644)
    secret = certs_cluster.ServingSecret(
        generated.ca_cert, generated.tls_cert, generated.tls_key, created=True
    )
    certs_cluster.write_files(secret, tmp_path)
    assert stat.S_IMODE((tmp_path / certs.TLS_KEY).stat().st_mode) == 0o600
    assert (tmp_path / certs.TLS_KEY).read_bytes() == generated.tls_key
