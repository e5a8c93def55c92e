"""The aiohttp application: admission and extender endpoints, probes and metrics.

Every POST route is an `Endpoint` served by the one transport in `limitguard.http.endpoint`, so every
request gets a well-formed answer: 200 with the protocol's body, or 400/408/413 with a JSON error, as
are 404 and 405 for paths and methods no route takes. A handler bug never becomes a 500 that could
block the cluster's writes or scheduling: it is logged, counted, and answered fail-open (admission:
allowed with a warning; extender: all pass, scores 0).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from limitguard.admission.forward import EXTENDER_LEADER_PATH, LEADER_PATH, ExtenderRelay, encode_decision
from limitguard.admission.review import AdmissionRequest, decode_review, encode_response
from limitguard.core.config import Config
from limitguard.core.response import Response, allowed
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.preempt import Preemption
from limitguard.extender.protocol import ExtenderArgs, decode_extender_args
from limitguard.extender.service import Extender
from limitguard.extender.verbs import (
    DEFAULT_PREFIX,
    PREEMPT,
    VERBS,
    Reply,
    fail_open_reply,
    filter_reply,
    preempt_fail_open_reply,
    preempt_reply,
    prioritize_reply,
)
from limitguard.extender.victims import PreemptionArgs, decode_preemption_args
from limitguard.http.bodies import BodyBudget
from limitguard.http.endpoint import Endpoint, answer_unrouted_in_json, endpoint_handler
from limitguard.http.limits import ServingLimits
from limitguard.http.logs import log_event, wanted
from limitguard.http.metrics import FAIL_OPEN_REASONS, Metrics
from limitguard.http.modes import FAST, HttpMode, http_mode_of, use_http_mode
from limitguard.http.peers import PeerGate, guarded
from limitguard.http.refusals import Refusals
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

Args = TypeVar("Args", ExtenderArgs, PreemptionArgs)


@dataclass(frozen=True, slots=True)
class Relayable(Generic[Args]):
    """An extender call's arguments and the bytes they came in, which a follower forwards as they
    are (never a re-encoding: the leader decodes exactly what the follower did)."""

    args: Args
    body: bytes


# A handler answers in the same loop turn, or (a follower forwarding to its leader) awaits the answer.
Handler = Callable[[AdmissionRequest], Response | Awaitable[Response]]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024  # an object and its oldObject, each up to etcd's 1.5 MiB
DEFAULT_BODY_TIMEOUT_SECONDS = 10.0
# Measured ExtenderArgs (docs/extender.md): kube-scheduler sends at most numFeasibleNodesToFind
# candidates (by default 10% of 5,000 nodes, 5% of 15,000). nodeCacheCapable (names): 23 KB / 34 KB
# by default, 0.65 MB for all 15,000. Full NodeLists of real Nodes (6.2-13.9 KB each): 3.1-6.9 MB at
# 5,000 and 4.7-10.4 MB at 15,000 by default; with percentageOfNodesToScore: 100, 31-69 MB at 5,000
# and 94-208 MB at 15,000, which no 512 MiB replica should hold (use nodeCacheCapable there).
DEFAULT_EXTENDER_MAX_BODY_BYTES = 32 * 1024 * 1024
FORWARDED = "forwarded"  # the outcome of an extender call a follower relayed from the leader
NOTEWORTHY_ACTIONS = frozenset({"deny", "warn", "dryrun"})  # not allow, not mutate (a defaulted pod)
INTERNAL_ERROR = allowed("internal-error", "limitguard: internal error, request not checked")


@dataclass
class ServerSettings:
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS
    extender_max_body_bytes: int = DEFAULT_EXTENDER_MAX_BODY_BYTES
    extender_prefix: str = DEFAULT_PREFIX
    limits: ServingLimits = field(default_factory=ServingLimits)  # connections, deadlines, bodies in flight
    # How the server meets aiohttp (limitguard.http.modes); `serve` chooses it with the start-up check.
    http_mode: HttpMode = FAST


@dataclass
class Services:
    """What the routes need, built once by the caller."""

    state: ClusterState
    config: Config
    handlers: dict[str, Handler]  # endpoint name (validate, mutate) -> handler
    metrics: Metrics
    settings: ServerSettings = field(default_factory=ServerSettings)
    extender_config: ExtenderConfig | None = None  # default: the scorers of limitguard's configuration
    leader_handler: Handler | None = None  # a replica-set member: decides forwarded reviews (LEADER_PATH)
    # A replica-set member: its extender calls answered by the leader (EXTENDER_LEADER_PATH)
    extender_relay: ExtenderRelay | None = None
    # Client-certificate checks by route group: "leader" (the replicas), "admission", "extender".
    peer_gates: dict[str, PeerGate] = field(default_factory=dict)
    # What the connection and body bounds refused (limitguard_*_refused_total and the like).
    refusals: Refusals = field(default_factory=Refusals)


SERVICES = web.AppKey("services", Services)


def _milliseconds(seconds: float) -> float:
    """Milliseconds to the microsecond for the log line, as round(ms, 3) but for exact ties:
    that spelling formats through a string, at twice the cost, on every logged answer."""
    return round(seconds * 1_000_000) / 1000


def _logged_at_info(response: Response) -> bool:
    """Denials, warnings, dry-run findings, errors and fail-open answers are worth a line each;
    a plain allow is not (as Gatekeeper logs denies only): at thousands of admissions a second
    the JSON line would cost more than the policy work. They are logged at debug."""
    return (
        not response.allowed
        or response.action in NOTEWORTHY_ACTIONS
        or bool(response.warnings)
        or response.reason in FAIL_OPEN_REASONS
    )


def admission_endpoint(
    name: str,
    handler: Handler,
    services: Services,
    encode: Callable[[AdmissionRequest, Response], bytes] = encode_response,
) -> Endpoint[AdmissionRequest, Response]:
    metrics = services.metrics
    answers = metrics.answers
    latency = metrics.latency.series((name,))

    def observe(review: AdmissionRequest, response: Response, seconds: float) -> None:
        key = (name, review.resource, review.sub_resource, response.allowed, response.action, response.reason)
        answers.inc(key)  # an AnswerKey
        latency.observe(seconds)
        level = logging.INFO if _logged_at_info(response) else logging.DEBUG
        if not wanted(log, level, "admission"):
            return
        fields = {
            "webhook": name,
            "uid": review.uid,
            "resource": review.target,
            "operation": review.operation,
            "object": review.describe(),
            "allowed": response.allowed,
            "reason": response.reason,
            "action": response.action,
            "dryRun": review.dry_run,
            "ms": _milliseconds(seconds),
        }
        # What was found, for the answers that say (a denial, a warning, a dry-run finding): a
        # DryRun rollout's log is otherwise only the reason's word. Texts built from names and
        # numbers, with any malformed value already cut short: never the object itself.
        if response.message:
            fields["detail"] = response.message  # not "message": the LogRecord's own attribute
        if response.warnings:
            fields["warnings"] = response.warnings
        log_event(log, level, "admission", fields)

    return Endpoint(
        name=name,
        decode=getattr(handler, "decode", decode_review),  # a follower's keeps the bytes it forwards
        answer=handler,
        fail_open=lambda review: INTERNAL_ERROR,
        encode=encode,
        observe=observe,
        rejected=lambda status: metrics.bad_requests.inc((name, str(status))),
        max_body_bytes=services.settings.max_body_bytes,
        json_only=True,
    )


def extender_endpoint(
    verb: str, extender: Extender, services: Services, leader_route: bool = False
) -> Endpoint[Any, Reply]:
    reply = filter_reply if verb == "filter" else prioritize_reply
    return _extender_route(
        verb,
        services,
        partial(decode_extender_args, lists=extender.name_lists),
        lambda args: reply(extender, args),
        lambda args: fail_open_reply(verb, args),
        leader_route,
    )


def preempt_endpoint(
    preemption: Preemption, services: Services, leader_route: bool = False
) -> Endpoint[Any, Reply]:
    return _extender_route(
        PREEMPT,
        services,
        decode_preemption_args,
        partial(preempt_reply, preemption),
        preempt_fail_open_reply,
        leader_route,
    )


def _extender_route(
    verb: str,
    services: Services,
    decode: Callable[[bytes], Args],
    answer: Callable[[Args], Reply],
    fail_open: Callable[[Args], Reply],
    leader_route: bool = False,
) -> Endpoint[Any, Reply]:
    """An extender verb's endpoint: its metrics and debug line, its body limit. In a replica set
    (services.extender_relay) a follower has the leader answer; the *leader_route* is where the
    leader answers those calls, only while it decides."""
    metrics = services.metrics
    requests = metrics.extender_requests
    duration = metrics.extender_duration.series((verb,))

    def observe(args: Args, reply: Reply, seconds: float) -> None:
        requests.inc((verb, reply.outcome))
        duration.observe(seconds)
        if reply.filtered:
            metrics.extender_filtered_nodes.inc(reply.filtered)
        if reply.unknown:
            metrics.extender_unknown_nodes.inc(reply.unknown)
        if wanted(log, logging.DEBUG, "extender"):
            candidates = args.node_names if isinstance(args, ExtenderArgs) else args.victims
            log_event(
                log,
                logging.DEBUG,
                "extender",
                {
                    "verb": verb,
                    "pod": args.describe_pod(),
                    "candidates": len(candidates),
                    "outcome": reply.outcome,
                    "ms": _milliseconds(seconds),
                },
            )

    def rejected(status: int) -> None:
        requests.inc((verb, "bad-request"))

    limit = services.settings.extender_max_body_bytes
    relay = services.extender_relay
    if relay is None:
        return Endpoint(f"extender-{verb}", decode, answer, fail_open, _payload, observe, rejected, limit)
    if leader_route:
        answer = _while_deciding(relay, answer)
        return Endpoint(
            f"leader-extender-{verb}", decode, answer, fail_open, _payload, observe, rejected, limit
        )

    async def from_leader(call: Relayable[Args]) -> Reply:
        answered = await relay.ask(verb, call.body)
        return answer(call.args) if answered is None else Reply(answered, FORWARDED)

    def routed(call: Relayable[Args]) -> Reply | Coroutine[Any, Any, Reply]:
        # The leader answers in this loop turn; a follower awaits its leader.
        return answer(call.args) if relay.answers_here else from_leader(call)

    return Endpoint(
        f"extender-{verb}",
        lambda body: Relayable(decode(body), body),  # the bytes as received (no copy)
        routed,
        lambda call: fail_open(call.args),
        _payload,
        lambda call, reply, seconds: observe(call.args, reply, seconds),
        rejected,
        limit,
    )


def _while_deciding(relay: ExtenderRelay, answer: Callable[[Args], Reply]) -> Callable[[Args], Reply]:
    """*answer*, refused with 503 unless this replica decides (checked and answered in one loop turn)."""

    def as_leader(args: Args) -> Reply:
        relay.check_deciding()
        return answer(args)

    return as_leader


def _payload(request: object, reply: Reply) -> bytes:
    return reply.payload


async def healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def readyz(request: web.Request) -> web.Response:
    state = request.app[SERVICES].state
    if state.ready:
        return web.Response(text="ok")
    return web.Response(status=503, text="cluster state not synced yet")


async def metrics_endpoint(request: web.Request) -> web.Response:
    registry = request.app[SERVICES].metrics.registry
    response = web.Response(body=generate_latest(registry))
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


def _add_route(
    app: web.Application,
    path: str,
    endpoint: Endpoint[Any, Any],
    timeout: float,
    budget: BodyBudget,
    gate: PeerGate | None,
) -> None:
    handler = endpoint_handler(endpoint, timeout, http_mode_of(app), budget)
    app.router.add_post(path, handler if gate is None else guarded(handler, gate, endpoint.rejected))


def create_app(services: Services) -> web.Application:
    app = web.Application()  # bodies are read by each endpoint, with its own limit
    app[SERVICES] = services
    use_http_mode(app, services.settings.http_mode)
    timeout = services.settings.body_timeout_seconds
    # one budget for every route: the bytes are the process's
    budget = BodyBudget(services.settings.limits, services.refusals)
    gates = services.peer_gates
    for name, handler in services.handlers.items():
        endpoint = admission_endpoint(name, handler, services)
        _add_route(app, f"/{name}", endpoint, timeout, budget, gates.get("admission"))
    if services.leader_handler is not None:
        leader = admission_endpoint(
            "leader", services.leader_handler, services, lambda review, response: encode_decision(response)
        )
        _add_route(app, LEADER_PATH, leader, timeout, budget, gates["leader"])  # never open
    extender_config = services.extender_config or ExtenderConfig(services.config.scorers)
    extender = Extender(services.state, services.config, extender_config)
    preemption = Preemption(services.state, services.config)
    prefix = "/" + services.settings.extender_prefix.strip("/")
    for verb in VERBS:
        endpoint = extender_endpoint(verb, extender, services)
        _add_route(app, f"{prefix}/{verb}", endpoint, timeout, budget, gates.get("extender"))
    preempt = preempt_endpoint(preemption, services)
    _add_route(app, f"{prefix}/{PREEMPT}", preempt, timeout, budget, gates.get("extender"))
    if services.extender_relay is not None:  # the leader's routes for its followers' calls: never open
        for verb in VERBS:
            endpoint = extender_endpoint(verb, extender, services, leader_route=True)
            _add_route(
                app, EXTENDER_LEADER_PATH.format(verb=verb), endpoint, timeout, budget, gates["leader"]
            )
        preempt = preempt_endpoint(preemption, services, leader_route=True)
        _add_route(app, EXTENDER_LEADER_PATH.format(verb=PREEMPT), preempt, timeout, budget, gates["leader"])
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_endpoint)
    answer_unrouted_in_json(app)
    return app
