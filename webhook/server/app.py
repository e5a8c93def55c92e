"""The aiohttp application: admission endpoints, probes and metrics.

Every request gets a well-formed answer: 200 with an AdmissionReview, or 400/408/413 with a JSON
error. A handler bug never becomes a 500 that could block the cluster's writes: it is logged,
counted, and answered allowed with a warning.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from webhook.admission.review import (
    AdmissionRequest,
    AdmissionResponse,
    ReviewError,
    decode_review,
    encode_response,
)
from webhook.cluster.state import ClusterState
from webhook.core.config import Config
from webhook.extender import add_extender_routes
from webhook.metrics import Metrics, cached_children
from webhook.server.body import BodyError, json_error, read_body

log = logging.getLogger("limitguard.admission")

Handler = Callable[[AdmissionRequest], AdmissionResponse]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024  # an object and its oldObject, each up to etcd's 1.5 MiB
DEFAULT_BODY_TIMEOUT_SECONDS = 10.0
DEFAULT_EXTENDER_MAX_BODY_BYTES = 64 * 1024 * 1024  # ExtenderArgs may carry a full NodeList


@dataclass
class ServerSettings:
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS
    extender_max_body_bytes: int = DEFAULT_EXTENDER_MAX_BODY_BYTES


@dataclass
class Services:
    """What the routes need, built once by the caller."""

    state: ClusterState
    config: Config
    handlers: dict[str, Handler]  # endpoint name (validate, mutate) -> handler
    metrics: Metrics
    settings: ServerSettings = field(default_factory=ServerSettings)


SERVICES = web.AppKey("services", Services)


def _logged_at_info(response: AdmissionResponse) -> bool:
    """Denials, warnings, dry-run findings, errors and fail-open answers are worth a line each;
    a plain allow is not (as Gatekeeper logs denies only): at thousands of admissions a second
    the JSON line would cost more than the policy work. They are logged at debug."""
    return (
        not response.allowed
        or response.action in NOTEWORTHY_ACTIONS
        or bool(response.warnings)
        or response.reason in FAIL_OPEN_REASONS
    )


FAIL_OPEN_REASONS = frozenset({"internal-error", "state-incomplete"})
NOTEWORTHY_ACTIONS = frozenset({"deny", "warn", "dryrun"})  # not allow, not mutate (a defaulted pod)


def _admission_route(name: str, handler: Handler, services: Services) -> Callable:
    metrics = services.metrics
    settings = services.settings
    admissions = cached_children(metrics.admissions)
    bad_requests = cached_children(metrics.bad_requests)
    latency = metrics.latency.labels(name)

    def fail(status: int, message: str) -> web.Response:
        bad_requests(name, str(status)).inc()
        return json_error(status, message)

    async def endpoint(request: web.Request) -> web.Response:
        started = time.perf_counter()
        if request.content_type != "application/json":
            return fail(400, f"expected Content-Type application/json, got {request.content_type!r}")
        try:
            body = await read_body(request, settings.max_body_bytes, settings.body_timeout_seconds)
        except BodyError as error:
            return fail(error.status, error.message)
        try:
            review = decode_review(body)
        except ReviewError as error:
            return fail(400, str(error))
        try:
            response = handler(review)
        except Exception:
            log.exception("handler failed; answering allowed", extra={"uid": review.uid, "webhook": name})
            response = AdmissionResponse(
                True, "internal-error", warnings=("limitguard: internal error, request not checked",)
            )
        admissions(name, review.target, "allowed" if response.allowed else "denied", response.action).inc()
        elapsed = time.perf_counter() - started
        latency.observe(elapsed)
        level = logging.INFO if _logged_at_info(response) else logging.DEBUG
        if not log.isEnabledFor(level):
            return web.Response(body=encode_response(review, response), content_type="application/json")
        log.log(
            level,
            "admission",
            extra={
                "webhook": name,
                "uid": review.uid,
                "resource": review.target,
                "operation": review.operation,
                "object": review.describe(),
                "allowed": response.allowed,
                "reason": response.reason,
                "action": response.action,
                "dryRun": review.dry_run,
                "ms": round(elapsed * 1000, 3),
            },
        )
        return web.Response(body=encode_response(review, response), content_type="application/json")

    return endpoint


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


def create_app(services: Services) -> web.Application:
    app = web.Application()  # bodies are read by read_body, with each route's own limit
    app[SERVICES] = services
    for name, handler in services.handlers.items():
        app.router.add_post(f"/{name}", _admission_route(name, handler, services))
    add_extender_routes(app, services, max_body_bytes=services.settings.extender_max_body_bytes)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_endpoint)
    return app
