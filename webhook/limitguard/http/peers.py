"""Authenticated routes: the client certificate is checked before a byte of the body is read.

The server context asks every client for a certificate (verify mode CERT_OPTIONAL) and verifies any
it gets against the CAs it trusts, so a connection either carries a verified certificate or none.
A `PeerGate` then decides per route group: `/leader/*` admits only the replicas' own certificate,
and, when configured, the admission and extender routes admit only the apiserver's or
kube-scheduler's. A refused request gets 401 and its connection is closed: nothing was read, so
nothing was decided, recorded or held.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from aiohttp import web

from limitguard.certs.peers import PeerCAError, TrustedPeers, load_issuers
from limitguard.core.memo import Cleared, Memo, MiB
from limitguard.http.endpoint import json_error

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.Response]]
MAX_REMEMBERED = 256
_UNKNOWN = object()


def peer_certificate(request: web.Request) -> bytes | None:
    """The DER bytes of the verified client certificate of *request*'s connection, or None."""
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is None:
        return None
    return ssl_object.getpeercert(binary_form=True)


class PeerGate:
    """The callers one route group admits: issued by the CA in *ca_file*, naming one of *names*."""

    def __init__(self, what: str, ca_file: Path, names: Iterable[str]) -> None:
        self.what = what  # in the refusal: "replica authentication", "client authentication"
        self.ca_file = ca_file
        self.names = frozenset(names)
        self._peers = TrustedPeers(load_issuers(ca_file), self.names)  # PeerCAError at start-up
        # verdicts by certificate bytes (a client keeps its certificate), forgotten when the CA reloads
        self._verdicts: Memo[bytes, str | None] = Memo(
            "peer-verdicts", entries=MAX_REMEMBERED, max_bytes=1 * MiB, cleared=Cleared.ON_CHANGE
        )

    def reload(self) -> None:
        """Trust the bundle now in *ca_file* (and only it): called when the certificate files change."""
        try:
            issuers = load_issuers(self.ca_file)
        except PeerCAError as error:
            log.warning("CA bundle not reloaded (keeping the previous one)", extra={"error": str(error)})
            return
        self._peers = TrustedPeers(issuers, self.names)
        self._verdicts.clear()

    def problem(self, request: web.Request) -> str | None:
        der = peer_certificate(request)
        if der is None:
            return self._peers.problem(None)
        verdict = self._verdicts.get(der, _UNKNOWN)  # type: ignore[arg-type]
        if verdict is _UNKNOWN:
            verdict = self._peers.problem(der)
            self._verdicts.put(der, verdict)
        return verdict  # type: ignore[return-value]


def guarded(handler: Handler, gate: PeerGate, rejected: Callable[[int], None]) -> Handler:
    """*handler* behind *gate*: 401 (counted through *rejected*) for any caller it does not admit."""

    async def serve(request: web.Request) -> web.Response:
        problem = gate.problem(request)
        if problem is None:
            return await handler(request)
        rejected(401)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("refused", extra={"path": request.path, "peer": request.remote, "why": problem})
        response = json_error(401, f"{gate.what}: {problem}")
        response.force_close()  # the body was never read
        return response

    return serve
