"""The second scheduler's trust in limitguard, kept current: a CA bundle with an overlap, and a
restart of kube-scheduler whenever what it read at start has changed.

kube-scheduler builds its extender client once (pkg/scheduler/extender.go `makeTransport` through
client-go's `rest.TLSConfigFor`): the `caFile` is read into a static root pool at start and never
again, in every release 1.31-1.37. The client certificate files are re-read on each new TLS
handshake (client-go `transport/transport.go`: `ReloadTLSFiles` and its caching loader, at most once
a second), but a kept-alive connection keeps presenting the old one. Neither gets the
connection-closing rotation of client-go's transport cache, which this transport bypasses. So the
files kube-scheduler depends on are only current after a restart.

A `TrustKeeper` runs next to kube-scheduler in its pod, on the files the pod mounts (no API access
to Secrets). Each poll it builds the bundle kube-scheduler's `caFile` points at: every CA in its
inputs (limitguard's serving `ca.crt`, and the CA that will issue the next serving certificate where
the certificate mode publishes it early), plus each CA that left the inputs less than `overlap`
ago, so replicas of limitguard that still serve from it stay trusted until kubelet has updated them
all. A `ca.crt` that `generate` mode's renewal wrote (a renewal file) holds the new CA and the CAs
it replaced: those are trusted until `overlap` after the new CA was made, and then dropped at once
(limitguard.certs.renewal). When the bundle or the client certificate differs from what the running kube-scheduler
started with, the keeper writes the bundle and restarts kube-scheduler: at once on a replica that
does not lead, after `leader_delay` on the one that does, so the others restart first and the
leader hands its Lease (kube-scheduler releases it on shutdown, `ReleaseOnCancel`) to one that
already runs with the new files.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.serialization import Encoding

from limitguard.certs.generate import write_file
from limitguard.certs.renewal import split_renewal_bundle
from limitguard.clock import Clock
from limitguard.errors import LimitguardError

log = logging.getLogger(__name__)

DEFAULT_POLL_SECONDS = 2.0  # as limitguard's own certificate reloader polls
DEFAULT_OVERLAP_SECONDS = 600.0  # well past kubelet's update of a mounted Secret in every pod
DEFAULT_LEADER_DELAY_SECONDS = 60.0  # the other replicas restart first


class TrustError(LimitguardError, ValueError):
    """An input that holds no usable CA certificate."""


def fingerprint(certificate: x509.Certificate) -> str:
    return certificate.fingerprint(hashes.SHA256()).hex()


@dataclass
class TrustBundle:
    """The CAs to trust, in order (inputs first, then those kept for the overlap), and when each
    kept one left the inputs (seconds on the keeper's clock)."""

    current: list[x509.Certificate]
    retired: dict[str, tuple[x509.Certificate, float]] = field(default_factory=dict)

    def pem(self) -> bytes:
        """Every CA once, in a fixed order (by fingerprint): a CA moving from the inputs to the
        overlap changes nothing kube-scheduler reads, so it is no reason to restart it."""
        every = {fingerprint(certificate): certificate for certificate in self.current}
        for key, (certificate, _) in self.retired.items():
            every.setdefault(key, certificate)
        return b"".join(every[key].public_bytes(Encoding.PEM) for key in sorted(every))


def read_cas(paths: Sequence[Path]) -> list[x509.Certificate]:
    """Every certificate of the input files, each once, in order; a missing file reads as none
    (the upcoming CA exists only while a rotation is under way)."""
    found: dict[str, x509.Certificate] = {}
    for path in paths:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        try:
            certificates = x509.load_pem_x509_certificates(data)
        except ValueError as error:
            raise TrustError(f"{path}: not a PEM certificate bundle: {error}") from None
        for certificate in certificates:
            found.setdefault(fingerprint(certificate), certificate)
    return list(found.values())


def next_bundle(
    previous: TrustBundle | None,
    inputs: list[x509.Certificate],
    now: float,
    wall_time: float,
    overlap: float,
    ended: frozenset[str] = frozenset(),
) -> TrustBundle:
    """The inputs, plus each CA of *previous* that left them less than *overlap* seconds ago, has
    not expired (*wall_time*: seconds since the epoch, for the certificates' validity) and is not
    one a renewal file has *ended* (its overlap is over already)."""
    current_prints = {fingerprint(certificate) for certificate in inputs}
    retired: dict[str, tuple[x509.Certificate, float]] = {}
    if previous is not None:
        for certificate in previous.current:
            key = fingerprint(certificate)
            if key not in current_prints:
                retired[key] = (certificate, now)
        for key, (certificate, since) in previous.retired.items():
            if key not in current_prints:
                retired.setdefault(key, (certificate, since))
    retired = {
        key: (certificate, since)
        for key, (certificate, since) in retired.items()
        if now - since < overlap
        and certificate.not_valid_after_utc.timestamp() > wall_time
        and key not in ended
    }
    return TrustBundle(list(inputs), retired)


def file_digest(paths: Sequence[Path]) -> str:
    """What kube-scheduler reads of *paths* (the client certificate and key), as one digest."""
    digest = hashlib.sha256()
    for path in paths:
        try:
            digest.update(path.read_bytes())
        except FileNotFoundError:
            digest.update(b"\0missing")
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class KeeperSettings:
    ca_files: tuple[Path, ...]  # limitguard's serving ca.crt, and the upcoming CA where published
    bundle_file: Path  # what kube-scheduler's tlsConfig.caFile names
    client_files: tuple[Path, ...] = ()  # tlsConfig.certFile and keyFile, when set
    poll_seconds: float = DEFAULT_POLL_SECONDS
    overlap_seconds: float = DEFAULT_OVERLAP_SECONDS
    leader_delay_seconds: float = DEFAULT_LEADER_DELAY_SECONDS
    renewal_ca_files: tuple[Path, ...] = ()  # ca.crt files as generate mode's renewal writes them


def read_inputs(settings: KeeperSettings, wall_time: float) -> tuple[list[x509.Certificate], frozenset[str]]:
    """The CAs to trust now, each once, and the fingerprints of those a renewal file has ended."""
    found = {fingerprint(certificate): certificate for certificate in read_cas(settings.ca_files)}
    ended: set[str] = set()
    for path in settings.renewal_ca_files:
        in_force, replaced = split_renewal_bundle(read_cas((path,)), wall_time, settings.overlap_seconds)
        for certificate in in_force:
            found.setdefault(fingerprint(certificate), certificate)
        ended.update(fingerprint(certificate) for certificate in replaced)
    return list(found.values()), frozenset(ended - found.keys())


class TrustKeeper:
    """See the module docstring. *restart* ends the running kube-scheduler (kubelet starts it again,
    reading the files anew); *leads* says whether this replica holds the scheduler's Lease;
    *wall_time* is the epoch seconds a certificate's validity is judged at."""

    def __init__(
        self,
        settings: KeeperSettings,
        clock: Clock,
        restart: Callable[[], Awaitable[bool]],
        leads: Callable[[], Awaitable[bool]],
        wall_time: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._restart = restart
        self._leads = leads
        self._wall_time = wall_time
        self.bundle: TrustBundle | None = None
        self.started_with: str | None = None  # the files' digest the running kube-scheduler read
        self._pending_since: float | None = None  # when a difference was first seen
        self.restarts = 0

    def _digest(self, bundle_pem: bytes) -> str:
        client = file_digest(self.settings.client_files)
        return hashlib.sha256(bundle_pem + b"\0" + client.encode()).hexdigest()

    def prepare(self) -> None:
        """Write the first bundle before kube-scheduler starts (the pod's startup order). A bundle
        already there means the keeper itself was restarted while kube-scheduler runs: that is the
        one kube-scheduler read, and a difference from it restarts kube-scheduler as usual."""
        inputs, _ = read_inputs(self.settings, self._wall_time())
        self.bundle = next_bundle(None, inputs, self.clock.now(), self._wall_time(), 0.0)
        pem = self.bundle.pem()
        if not pem:
            files = (*self.settings.ca_files, *self.settings.renewal_ca_files)
            raise TrustError(f"no CA certificate in {', '.join(map(str, files))}")
        try:
            self.started_with = self._digest(self.settings.bundle_file.read_bytes())
            return
        except FileNotFoundError:
            pass
        write_file(self.settings.bundle_file, pem, 0o644)
        self.started_with = self._digest(pem)
        log.info("scheduler trust written", extra={"cas": len(self.bundle.current)})

    async def step(self) -> bool:
        """One poll; True when kube-scheduler was restarted."""
        wall_time = self._wall_time()
        try:
            inputs, ended = read_inputs(self.settings, wall_time)
        except TrustError as error:
            log.warning("scheduler trust not updated (keeping the previous one)", extra={"error": str(error)})
            return False
        bundle = next_bundle(
            self.bundle, inputs, self.clock.now(), wall_time, self.settings.overlap_seconds, ended
        )
        pem = bundle.pem()
        if not pem:
            log.warning("no CA certificate in the inputs: keeping the previous trust")
            return False
        self.bundle = bundle
        digest = self._digest(pem)
        if digest == self.started_with:
            self._pending_since = None
            return False
        if self._pending_since is None:
            self._pending_since = self.clock.now()
            log.info(
                "scheduler trust changed", extra={"cas": len(bundle.current), "kept": len(bundle.retired)}
            )
        if (
            await self._leads()
            and self.clock.now() - self._pending_since < self.settings.leader_delay_seconds
        ):
            return False  # the other replicas go first
        write_file(self.settings.bundle_file, pem, 0o644)
        if not await self._restart():
            return False  # no kube-scheduler process to end yet: the next poll tries again
        self.started_with = digest
        self._pending_since = None
        self.restarts += 1
        log.info("kube-scheduler restarted to read the new trust", extra={"restarts": self.restarts})
        return True

    async def run(self) -> None:
        if self.bundle is None:
            self.prepare()
        while True:
            await self.clock.sleep(self.settings.poll_seconds)
            await self.step()
