"""One decision point for the ledger: the leader decides, followers forward (SPEC 4).

Each replica keeps its own ledger of approved-but-unseen bindings. Two replicas answering bindings
for one node within a watch round-trip would each see only their own approvals, so every request
that reads and writes the ledger - `pods/binding` and legacy `bindings`, pod CREATE with
`spec.nodeName`, and a resize that grows a limit - is decided by the leader alone. A follower sends
the AdmissionReview to the leader's `/leader/validate` over mutual TLS (verifying the leader's
serving certificate with the CA, presenting its own serving pair as the client certificate the
leader checks) and relays the decision; everything else is answered locally, as before.

A follower forwards the bytes it received, never a re-encoding: the leader decodes exactly what the
follower decoded, so the two cannot disagree (a review nested deeper than orjson can encode once
made the follower's re-encoding fail and the request pass unchecked). `LeaderRouted.decode` keeps
the bytes of the requests the leader decides; `LeaderRouted` forwards only those.

The leader checks that it may decide and decides in the same event-loop turn, so a decision can
never straddle a step-down. While no deciding leader answers, `replicas.noLeaderPolicy` applies.

The extender's verbs read the ledger too (a node's room counts the bindings approved and not yet
seen bound), and kube-scheduler's one kept-alive connection reaches whichever replica the Service
chose. A follower's own ledger holds none of those bindings, so `ExtenderRelay` has the leader answer
its extender calls as well (`/leader/extender/<verb>`, the bytes as received, the answer's bytes
relayed). An extender answer is a proposal the binding check still judges, so while no leader
answers the follower answers from its own state, as a single replica does (no noLeaderPolicy).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from inspect import iscoroutine
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import orjson

from limitguard.admission.review import AdmissionRequest, decode_review
from limitguard.core.config import NoLeaderPolicy
from limitguard.core.limitaware import grown_limits
from limitguard.core.objects import object_or_empty as _map
from limitguard.core.podlimits import PodSpecError, pod_limits
from limitguard.core.podrules import DEFAULT_RULES
from limitguard.core.response import Response, allowed, errored
from limitguard.errors import LimitguardError, StatusError
from limitguard.kube.replica_metrics import ReplicaMetrics

log = logging.getLogger(__name__)

LEADER_PATH = "/leader/validate"
EXTENDER_LEADER_PATH = "/leader/extender/{verb}"
NOT_DECIDING = 503  # the peer answer of a replica that is not (or not yet) the deciding leader
# A replica started into a burst waits this long (real time, a bound only) for its first look at
# the Lease before deciding alone: otherwise it answers as if no replica led while another does.
FIRST_ROUND_WAIT_SECONDS = 1.0
UNAUTHENTICATED = 401  # the leader did not accept this replica's client certificate

LocalHandler = Callable[[AdmissionRequest], Response | Coroutine[Any, Any, Response]]


def touches_ledger(request: AdmissionRequest) -> bool:
    """Whether answering *request* reads and may write the binding ledger (so the leader decides)."""
    if request.group != "":
        return False
    if request.operation == "CREATE" and request.target in ("pods/binding", "bindings"):
        return True
    if request.operation == "CREATE" and request.target == "pods":
        return bool(_map(_map(request.object).get("spec")).get("nodeName"))
    if request.operation == "UPDATE" and request.target == "pods/resize":
        try:
            # specs alone: no release's rules count a spec's limits differently without a resize status
            old = pod_limits(_map(_map(request.old_object).get("spec")), None, DEFAULT_RULES)
            new = pod_limits(_map(_map(request.object).get("spec")), None, DEFAULT_RULES)
        except PodSpecError:
            return False  # rejected as malformed locally, without the ledger
        return bool(grown_limits(old, new))
    return False


@dataclass(slots=True)
class LedgerRequest(AdmissionRequest):
    """A request the leader decides, with the bytes it arrived in (what a follower forwards)."""

    body: bytes = b""


def decode_for_leader(body: bytes) -> AdmissionRequest:
    """decode_review, keeping *body* with the requests that touch the ledger."""
    request = decode_review(body)
    if not touches_ledger(request):
        return request
    return LedgerRequest(*(getattr(request, name) for name in AdmissionRequest.__slots__), bytes(body))


def encode_decision(response: Response) -> bytes:
    return orjson.dumps(
        {
            "allowed": response.allowed,
            "reason": response.reason,
            "code": response.code,
            "message": response.message,
            "warnings": list(response.warnings),
            "action": response.action,
        }
    )


def decode_decision(body: bytes) -> Response:
    data = orjson.loads(body)
    if not isinstance(data, dict) or not isinstance(data.get("allowed"), bool):
        raise ValueError("not a limitguard decision")
    return Response(
        allowed=data["allowed"],
        reason=str(data.get("reason") or ""),
        code=int(data.get("code") or 200),
        message=str(data.get("message") or ""),
        warnings=tuple(str(text) for text in data.get("warnings") or ()),
        action=str(data.get("action") or "allow"),
    )


def _error_text(body: bytes) -> str:
    """The `error` of a JSON error answer (limitguard.http.endpoint.json_error), else its start."""
    try:
        error = orjson.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    return error[:300] if isinstance(error, str) else body[:200].decode(errors="replace")


class ForwardError(LimitguardError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason  # metric label: unreachable, timeout, not-leader, refused, bad-answer


def client_context(ca_file: Path, cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """Verifies the leader with *ca_file*; presents the serving pair as this replica's client certificate."""
    context = ssl.create_default_context(cafile=str(ca_file))
    context.load_cert_chain(cert_file, key_file)
    return context


class Forwarder:
    """Mutual-TLS client to the leader: the CA verifies it, *server_name* is the name its certificate
    has, and the serving pair is the client certificate. `reload` reads the three files again
    (the served pair changed); `add_trust` only the CA file (a renewal's new CA, before the pair)."""

    def __init__(
        self,
        ca_file: Path,
        cert_file: Path,
        key_file: Path,
        timeout_seconds: float,
        server_name: str | None = None,
    ) -> None:
        self._files = (ca_file, cert_file, key_file)
        self._context = client_context(*self._files)
        self._server_name = server_name
        self.timeout_seconds = timeout_seconds
        self._timeout = aiohttp.ClientTimeout(total=timeout_seconds)
        self._session: aiohttp.ClientSession | None = None
        self.reloads = 0

    def reload(self) -> None:
        """After a rotation: new connections verify with the new CA and present the new pair."""
        try:
            context = client_context(*self._files)
        except (ssl.SSLError, OSError) as error:
            log.warning("forwarding keeps its previous certificates", extra={"error": str(error)})
            return
        self._context = context  # a connection pool is keyed by its context: old connections go unused
        self.reloads += 1

    def add_trust(self) -> None:
        """The CA file changed while this replica still serves its pair (a renewal waits before it
        serves a certificate from a new CA): new connections also trust the CAs now in the file and
        still present the served pair. OpenSSL only adds trust; the next `reload` trusts exactly the file."""
        try:
            self._context.load_verify_locations(cafile=str(self._files[0]))
        except (ssl.SSLError, OSError) as error:
            log.warning("forwarding keeps its previous trust", extra={"error": str(error)})

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:  # created on the serving loop, on first use
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=256), timeout=self._timeout
            )
        return self._session

    async def post(self, address: str, path: str, body: bytes, timeout: float | None = None) -> bytes:
        """The leader's 200 answer to *body* on *path*; *timeout* (default forwardTimeoutSeconds) is
        what is left of the wait. ForwardError when it gives none."""
        extra: dict[str, Any] = {"server_hostname": self._server_name} if self._server_name else {}
        if timeout is not None:
            extra["timeout"] = aiohttp.ClientTimeout(total=timeout)
        try:
            async with self._client().post(
                f"https://{address}{path}",
                data=body,
                headers={"Content-Type": "application/json"},
                ssl=self._context,
                **extra,
            ) as answer:
                answer_body = await answer.read()
        except TimeoutError as error:
            raise ForwardError("timeout", str(error) or "no answer in time") from None
        except aiohttp.ClientError as error:
            raise ForwardError("unreachable", f"{type(error).__name__}: {error}") from None
        if answer.status == NOT_DECIDING:
            raise ForwardError("not-leader", answer_body[:200].decode(errors="replace"))
        if answer.status == UNAUTHENTICATED:  # our client certificate: usage, name or CA
            raise ForwardError("refused", _error_text(answer_body))
        if answer.status != 200:
            raise ForwardError("bad-answer", f"HTTP {answer.status}")
        return answer_body

    async def forward(self, address: str, request: LedgerRequest, timeout: float | None = None) -> Response:
        """The leader's decision; *timeout* (default forwardTimeoutSeconds) is what is left of it."""
        body = await self.post(address, LEADER_PATH, request.body, timeout)
        try:
            return decode_decision(body)
        except ValueError as error:
            raise ForwardError("bad-answer", str(error)) from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


class Leadership(Protocol):
    @property
    def deciding(self) -> bool: ...

    def leader_address(self) -> str | None: ...


class LeaderRouted:
    """The `/validate` handler of a replica in a replica set."""

    def __init__(
        self,
        local: LocalHandler,
        leadership: Leadership,
        forwarder: Forwarder,
        policy: NoLeaderPolicy,
        metrics: ReplicaMetrics,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.now = now
        self.local = local
        self.leadership = leadership
        self.forwarder = forwarder
        self.policy = policy
        self.metrics = metrics

    decode = staticmethod(decode_for_leader)  # the endpoint's decoder: keeps the bytes to forward

    async def __call__(self, request: AdmissionRequest) -> Response:
        if not isinstance(request, LedgerRequest) or self.leadership.deciding:
            answer = self.local(request)  # checked and decided in one loop turn
            return await answer if iscoroutine(answer) else answer  # a ConfigMap: off the loop
        address = self.leadership.leader_address()
        first_round: asyncio.Event | None = getattr(self.leadership, "first_round", None)
        budget: dict[str, float] = {}
        if address is None and first_round is not None and not first_round.is_set():
            # The start wait and the forward share forwardTimeoutSeconds, which the chart keeps below
            # the webhook's timeoutSeconds: the apiserver never gives up on this call first.
            total = self.forwarder.timeout_seconds
            waiting_since = self.now()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(first_round.wait(), min(FIRST_ROUND_WAIT_SECONDS, total))
            if self.leadership.deciding:
                answer = self.local(request)
                return await answer if iscoroutine(answer) else answer
            address = self.leadership.leader_address()
            budget["timeout"] = total - (self.now() - waiting_since)
            if address is not None and budget["timeout"] <= 0:
                return self.without_leader(request, "no time left to forward after the first election round")
        if address is None:
            return self.without_leader(request, "no deciding leader (election or catch-up under way)")
        started = time.perf_counter()
        try:
            response = await self.forwarder.forward(address, request, **budget)
        except ForwardError as error:
            self.metrics.forward_failures.labels(error.reason).inc()
            log.warning("forward to the leader failed", extra={"leader": address, "error": str(error)})
            return self.without_leader(request, f"leader {address} did not decide ({error.reason})")
        self.metrics.forward_latency.observe(time.perf_counter() - started)
        self.metrics.forwarded.labels("allowed" if response.allowed else "denied").inc()
        return response

    def without_leader(self, request: AdmissionRequest, why: str) -> Response:
        """replicas.noLeaderPolicy: decide alone, admit unchecked, or refuse so the scheduler retries."""
        self.metrics.no_leader_answers.labels(self.policy.value).inc()
        if self.policy is NoLeaderPolicy.LOCAL:
            return self.local(request)
        if self.policy is NoLeaderPolicy.ALLOW:
            return allowed("no-leader", f"limitguard: not checked, {why}")
        return errored("no-leader", f"limitguard cannot decide this now: {why}; retry shortly", NOT_DECIDING)

    def decide_as_leader(self, review: AdmissionRequest) -> Response:
        """`POST /leader/validate`: decide a forwarded review, only while this replica is the deciding
        leader (checked and decided in the same loop turn); otherwise refuse with 503, never decide."""
        if not self.leadership.deciding:
            raise StatusError(NOT_DECIDING, "this replica is not the deciding leader")
        return self.local(review)


class ExtenderRelay:
    """A replica's extender calls answered by the deciding leader, whose ledger holds every binding
    approved and not yet seen bound: `answers_here` while this replica decides, else `ask` forwards."""

    def __init__(self, leadership: Leadership, forwarder: Forwarder, metrics: ReplicaMetrics) -> None:
        self.leadership = leadership
        self.forwarder = forwarder
        self.metrics = metrics

    @property
    def answers_here(self) -> bool:
        return self.leadership.deciding

    async def ask(self, verb: str, body: bytes) -> bytes | None:
        """The leader's answer to this call's *body*, or None: answer it here, from this replica's
        own state (no leader known, or it did not answer within forwardTimeoutSeconds)."""
        address = self.leadership.leader_address()
        if address is None:
            self.metrics.extender_local_answers.labels("no-leader").inc()
            return None
        started = time.perf_counter()
        try:
            answer = await self.forwarder.post(address, EXTENDER_LEADER_PATH.format(verb=verb), body)
        except ForwardError as error:
            self.metrics.forward_failures.labels(error.reason).inc()
            self.metrics.extender_local_answers.labels(error.reason).inc()
            log.warning(
                "extender call not answered by the leader; answering it here",
                extra={"leader": address, "verb": verb, "error": str(error)},
            )
            return None
        self.metrics.forward_latency.observe(time.perf_counter() - started)
        return answer

    def check_deciding(self) -> None:
        """`POST /leader/extender/<verb>`: answered only while this replica is the deciding leader."""
        if not self.leadership.deciding:
            raise StatusError(NOT_DECIDING, "this replica is not the deciding leader")
