"""Server-side TLS: modern settings, and certificate reloading without a restart.

Certificates are rotated by cert-manager or a Secret update, which kubelet projects into the pod
some time later. A reloader polls the files and loads the new pair into the *same* SSLContext:
connections already open keep their session, every new handshake gets the new certificate.

The CA bundles that verify client certificates (the replicas' CA, the apiserver's client CA) are
polled with the pair: a changed bundle is added to the context's trust store (OpenSSL cannot take
one out, so a CA rotated away is still accepted by the handshake until a restart) and the
listeners are told, so each route's own check (limitguard.http.peers) and the follower's client
context (limitguard.admission.forward) trust exactly the new bundle.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

# ECDHE with AEAD ciphers only for TLS 1.2; TLS 1.3 suites are fixed by OpenSSL and all modern.
TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


def server_context(cert_file: Path, key_file: Path, client_cas: Sequence[Path] = ()) -> ssl.SSLContext:
    """With *client_cas*, clients may present a certificate (CERT_OPTIONAL): one that does not verify
    against these CAs, or lacks the clientAuth usage, fails the handshake; none is fine, and the
    routes that need one refuse the request."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(TLS12_CIPHERS)
    # No renegotiation: a TLS 1.2 client could otherwise make the server run a handshake again and
    # again on one connection (OpenSSL 3 refuses client-initiated ones by default, 1.1.1 does not).
    context.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE | ssl.OP_NO_RENEGOTIATION
    context.load_cert_chain(cert_file, key_file)
    if client_cas:
        for ca_file in client_cas:
            context.load_verify_locations(cafile=ca_file)
        context.verify_mode = ssl.CERT_OPTIONAL
    return context


def _fingerprint(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()


class CertificateReloader:
    """Watches a certificate pair (and the client CA bundles) and reloads them when they change.

    *sleep* is the wait between checks (asyncio.sleep by default); tests inject one they release
    themselves, so a check runs exactly when they say and no verdict depends on timing.
    *listeners* are called after any file changed and loaded (the forwarder, the route checks).
    """

    def __init__(
        self,
        context: ssl.SSLContext,
        cert_file: Path,
        key_file: Path,
        interval: float = 2.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        client_cas: Sequence[Path] = (),
        listeners: Sequence[Callable[[], None]] = (),
    ) -> None:
        self.context = context
        self.cert_file = cert_file
        self.key_file = key_file
        self.client_cas = tuple(client_cas)
        self.listeners = list(listeners)
        self.interval = interval
        self._sleep = sleep
        self.reloads = 0
        self._fingerprint = _fingerprint(cert_file, key_file)
        self._cas_fingerprint = _fingerprint(*self.client_cas)
        self._task: asyncio.Task[None] | None = None

    def check(self) -> bool:
        """Reload what changed; a half-written or mismatched pair, or an unreadable bundle, keeps the old."""
        try:
            fingerprint = _fingerprint(self.cert_file, self.key_file)
            cas_fingerprint = _fingerprint(*self.client_cas)
        except OSError as error:
            log.warning("cannot read certificate files: %s", error)
            return False
        changed = False
        if fingerprint != self._fingerprint:
            try:
                # Trial load first: a failed load_cert_chain can leave a context holding a new
                # certificate with the old key, which would break every later handshake.
                ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(self.cert_file, self.key_file)
                self.context.load_cert_chain(self.cert_file, self.key_file)
            except (ssl.SSLError, OSError) as error:
                log.warning("new certificate not loaded yet (will retry): %s", error)
                return False
            self._fingerprint = fingerprint
            self.reloads += 1
            changed = True
            log.info("serving certificate reloaded", extra={"certificate": str(self.cert_file)})
        if cas_fingerprint != self._cas_fingerprint:
            try:
                for ca_file in self.client_cas:
                    self.context.load_verify_locations(cafile=ca_file)
            except (ssl.SSLError, OSError) as error:
                log.warning("new CA bundle not loaded yet (will retry): %s", error)
            else:
                self._cas_fingerprint = cas_fingerprint
                changed = True
                log.info("client CA bundles reloaded", extra={"bundles": [str(f) for f in self.client_cas]})
        if changed:
            for listener in self.listeners:
                listener()
        return changed

    async def _run(self) -> None:
        while True:
            await self._sleep(self.interval)
            self.check()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
