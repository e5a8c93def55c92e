"""Server-side TLS: modern settings, and certificate reloading without a restart.

Certificates are rotated by cert-manager or a Secret update, which kubelet projects into the pod
some time later. A reloader polls the files and loads the new pair into the *same* SSLContext:
connections already open keep their session, every new handshake gets the new certificate. A pair
from a new CA waits a set delay first (`generate` mode's renewal: limitguard.certs.renewal).

The CA bundles that verify client certificates (the replicas' CA, the apiserver's client CA) are
polled with the pair: a changed bundle is added to the context's trust store (OpenSSL cannot take
one out, so a CA rotated away is still accepted by the handshake until a restart) and the trust
listeners are told, so each route's own check (limitguard.http.peers) trusts exactly the new
bundle and the follower's client context (limitguard.admission.forward) trusts it too. The pair
listeners are told when the served pair changes: a follower presents the pair it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from limitguard.certs.renewal import switch_delay
from limitguard.clock import Clock, SystemClock

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
    return _digest(*(path.read_bytes() for path in paths))


def _digest(*contents: bytes) -> str:
    digest = hashlib.sha256()
    for content in contents:
        digest.update(content)
    return digest.hexdigest()


def _served_certificate(cert_file: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(cert_file.read_bytes())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class _PendingPair:
    fingerprint: str
    certificate: x509.Certificate
    due: float  # on the reloader's clock


class CertificateReloader:
    """Watches a certificate pair (and the client CA bundles) and reloads them when they change.

    A new pair from the CA that issued the served one loads at the next check. A pair from another
    CA is served only *new_ca_delay* seconds after this reloader first saw it (never past the served
    certificate's expiry): long enough for every caller to have learnt that CA, see
    limitguard.certs.renewal. The CA bundles load at once. Nothing here runs per request.

    *sleep* is the wait between checks (asyncio.sleep by default); tests inject one they release
    themselves, so a check runs exactly when they say and no verdict depends on timing. *clock*
    measures the delay and *wall_time* (epoch seconds) judges the served certificate's expiry.
    *trust_listeners* are called after the client CA bundles were loaded (the route checks, the
    forwarder's trust), *pair_listeners* after a new pair was (the forwarder's client certificate).
    """

    def __init__(
        self,
        context: ssl.SSLContext,
        cert_file: Path,
        key_file: Path,
        interval: float = 2.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        client_cas: Sequence[Path] = (),
        trust_listeners: Sequence[Callable[[], None]] = (),
        pair_listeners: Sequence[Callable[[], None]] = (),
        *,
        clock: Clock | None = None,
        wall_time: Callable[[], float] = time.time,
        new_ca_delay: float = 0.0,
    ) -> None:
        self.context = context
        self.cert_file = cert_file
        self.key_file = key_file
        self.client_cas = tuple(client_cas)
        self.trust_listeners = list(trust_listeners)
        self.pair_listeners = list(pair_listeners)
        self.interval = interval
        self.new_ca_delay = new_ca_delay
        self._sleep = sleep
        self._clock = clock or SystemClock()
        self._wall_time = wall_time
        self.reloads = 0
        self._fingerprint = _fingerprint(cert_file, key_file)
        self._served = _served_certificate(cert_file)
        self._pending: _PendingPair | None = None
        self._cas_fingerprint = _fingerprint(*self.client_cas)
        self._task: asyncio.Task[None] | None = None

    @property
    def switch_due(self) -> float | None:
        """When (on the clock) a pair from a new CA found in the files will be served, if one waits."""
        return self._pending.due if self._pending is not None else None

    def check(self) -> bool:
        """Load what changed and is due; a half-written or mismatched pair, or an unreadable bundle,
        keeps the old (and is tried again at the next check)."""
        try:
            cert_pem, key_pem = self.cert_file.read_bytes(), self.key_file.read_bytes()
            cas_fingerprint = _fingerprint(*self.client_cas)
        except OSError as error:
            log.warning("cannot read certificate files: %s", error)
            return False
        fingerprint = _digest(cert_pem, key_pem)
        trust_loaded = cas_fingerprint != self._cas_fingerprint and self._load_trust(cas_fingerprint)
        pair_loaded = False
        if fingerprint == self._fingerprint:
            self._pending = None  # the files went back to the served pair
        else:
            pair_loaded = self._load_pair(fingerprint, cert_pem)
        for listener in self.trust_listeners if trust_loaded else ():
            listener()
        for listener in self.pair_listeners if pair_loaded else ():
            listener()
        return trust_loaded or pair_loaded

    def _load_trust(self, cas_fingerprint: str) -> bool:
        try:
            for ca_file in self.client_cas:
                self.context.load_verify_locations(cafile=ca_file)
        except (ssl.SSLError, OSError) as error:
            log.warning("new CA bundle not loaded yet (will retry): %s", error)
            return False
        self._cas_fingerprint = cas_fingerprint
        log.info("client CA bundles reloaded", extra={"bundles": [str(f) for f in self.client_cas]})
        return True

    def _pending_pair(self, fingerprint: str, cert_pem: bytes, now: float) -> _PendingPair | None:
        """The pair in the files and when it is due; None while its certificate cannot be read."""
        if self._pending is not None and self._pending.fingerprint == fingerprint:
            return self._pending
        try:
            certificate = x509.load_pem_x509_certificate(cert_pem)
        except ValueError as error:
            log.warning("new certificate not loaded yet (will retry): %s", error)
            return None
        if self._pending is not None and self._pending.certificate == certificate:
            return _PendingPair(fingerprint, certificate, self._pending.due)  # its key written since
        wait = switch_delay(self._served, certificate, self.new_ca_delay, self._wall_time())
        if wait > 0:
            log.info(
                "serving certificate from a new CA found: it is served once every caller trusts that CA",
                extra={"certificate": str(self.cert_file), "in_seconds": round(wait)},
            )
        return _PendingPair(fingerprint, certificate, now + wait)

    def _load_pair(self, fingerprint: str, cert_pem: bytes) -> bool:
        now = self._clock.now()
        pending = self._pending_pair(fingerprint, cert_pem, now)
        if pending is None:
            return False
        self._pending = pending
        if now < pending.due:
            return False
        try:
            # Trial load first: a failed load_cert_chain can leave a context holding a new
            # certificate with the old key, which would break every later handshake.
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(self.cert_file, self.key_file)
            self.context.load_cert_chain(self.cert_file, self.key_file)
        except (ssl.SSLError, OSError) as error:
            log.warning("new certificate not loaded yet (will retry): %s", error)
            return False
        self._fingerprint, self._served, self._pending = fingerprint, pending.certificate, None
        self.reloads += 1
        log.info("serving certificate reloaded", extra={"certificate": str(self.cert_file)})
        return True

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
