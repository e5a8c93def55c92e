"""Start-up checks of the two things a container must be given: the config file and the TLS directory.

The image's default command reads /etc/limitguard/config.yaml and /etc/limitguard/tls; when either is
missing or unusable, the error names the path, what to mount there, and the Helm chart values that do
it, instead of a bare `Permission denied` on a temporary file.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from limitguard.certs import generate as certs
from limitguard.errors import LimitguardError

log = logging.getLogger(__name__)


class MountError(LimitguardError):
    """A file or directory the server needs is missing or unusable; the text says what to mount."""


def check_config_file(path: str | None) -> None:
    if path is None:
        return
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise MountError(
            f"cannot read the configuration file {path}: {error.strerror}.\n"
            f"  Mount a LimitGuardConfiguration file at {path}:\n"
            f"  - Helm: the chart mounts its ConfigMap there (set it with the chart's `config:` values);\n"
            f"  - docker/podman: -v $PWD/config.yaml:{path}:ro\n"
            f"  or leave out --config to run with the defaults (no ratio is enforced then)."
        ) from None


def _cert_dir_help(directory: Path) -> str:
    return (
        f"  Mount the serving certificate at {directory} (tls.crt and tls.key; ca.crt for clients):\n"
        f"  - Helm: the chart mounts its TLS Secret there (values certs.mode: generate, certManager, or\n"
        f"    provided with certs.provided.secretName and certs.provided.caBundle);\n"
        f"  - docker/podman: `limitguard certs --service NAME --namespace NS --out certs`, then\n"
        f"    -v $PWD/certs:{directory}:ro\n"
        f"  or point --cert-dir at a writable directory to get a self-signed set for a local trial."
    )


def ensure_certificates(directory: str | Path, hostnames: list[str]) -> bool:
    """certs.ensure_serving_certificates, with a MountError naming the mount when it cannot work.

    Returns True when a self-signed set was generated.
    """
    directory = Path(directory)
    cert, key = directory / certs.TLS_CERT, directory / certs.TLS_KEY
    if cert.exists() != key.exists():
        present, absent = (cert, key) if cert.exists() else (key, cert)
        raise MountError(f"{present} exists but {absent} does not.\n" + _cert_dir_help(directory))
    for path in (cert, key):
        if path.exists() and not os.access(path, os.R_OK):
            raise MountError(f"cannot read {path}: permission denied.\n" + _cert_dir_help(directory))
    try:
        return certs.ensure_serving_certificates(directory, hostnames)
    except OSError as error:
        raise MountError(
            f"{directory} has no tls.crt/tls.key and a self-signed set cannot be written there "
            f"({error.strerror}).\n" + _cert_dir_help(directory)
        ) from None


def reissue_for_host(directory: Path, host: str) -> None:
    """A self-signed set made for another --host (`make run HOST=...` after an earlier run) gets a
    serving certificate naming this one too, signed by the same CA; a provided one is left alone."""
    try:
        added = certs.reissue_for_names(directory, [host])
    except (OSError, ValueError) as error:  # CAError is a ValueError
        log.warning("serving certificate not reissued for --host", extra={"host": host, "error": str(error)})
        return
    if added:
        log.info(
            "serving certificate reissued with the same CA", extra={"dir": str(directory), "added": added}
        )
