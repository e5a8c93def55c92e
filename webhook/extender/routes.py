"""aiohttp routes for the extender: POST {prefix}/filter and POST {prefix}/prioritize.

Thin: read a bounded body, decode ExtenderArgs, ask the Extender, encode. kube-scheduler treats any
non-200 answer as a failed call (an error unless the extender is `ignorable`), so a handler bug is
answered fail-open (all candidates pass, every score 0), logged and counted, never a 500.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

from webhook.extender.config import ExtenderConfig
from webhook.extender.protocol import (
    ExtenderProtocolError,
    decode_extender_args,
    encode_filter_error,
    encode_filter_result,
    encode_priority_columns,
)
from webhook.extender.service import Extender, ExtenderUnavailable
from webhook.metrics import cached_children
from webhook.server.body import BodyError, json_error, read_body

log = logging.getLogger("limitguard.extender")

DEFAULT_PREFIX = "/extender"
# With nodeCacheCapable: false every request carries full Node objects (status.images included),
# tens of MB on a large cluster; nodeCacheCapable: true sends names only and is the supported mode.
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
DURATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

EXTENDER = web.AppKey("extender", Extender)


class ExtenderMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "limitguard_extender_requests",
            "Extender calls answered, by verb and outcome",
            ["verb", "outcome"],
            registry=registry,
        )
        self.duration = Histogram(
            "limitguard_extender_duration_seconds",
            "Time to answer an extender call",
            ["verb"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.filtered_nodes = Counter(
            "limitguard_extender_filtered_nodes",
            "Candidate nodes the filter removed for exceeding their limit-to-allocatable ratio",
            registry=registry,
        )
        self.unknown_nodes = Counter(
            "limitguard_extender_unknown_nodes",
            "Candidate nodes not in limitguard's cluster state (passed, scored 0)",
            registry=registry,
        )


Verb = Callable[[Extender, Any], tuple[bytes, str]]


def _filter(extender: Extender, args: Any) -> tuple[bytes, str]:
    try:
        outcome = extender.filter(args)
    except ExtenderUnavailable as error:
        return encode_filter_error(str(error)), "unavailable"
    return encode_filter_result(args, outcome.passed, outcome.failed), outcome.reason


def _prioritize(extender: Extender, args: Any) -> tuple[bytes, str]:
    outcome = extender.prioritize(args)
    scores = outcome.score_array if outcome.score_array is not None else outcome.scores
    return encode_priority_columns(outcome.hosts, scores, outcome.host_json), outcome.reason


def _fail_open(verb: str, args: Any) -> bytes:
    if verb == "filter":
        return encode_filter_result(args, args.node_names, {})
    return encode_priority_columns(args.node_names, [0] * len(args.node_names))


def _route(
    verb: str, run: Verb, metrics: ExtenderMetrics | None, max_body: int, timeout: float
) -> Callable[[web.Request], Awaitable[web.Response]]:
    requests = cached_children(metrics.requests) if metrics is not None else None
    duration = metrics.duration.labels(verb) if metrics is not None else None

    def count(outcome: str) -> None:
        if requests is not None:
            requests(verb, outcome).inc()

    async def endpoint(request: web.Request) -> web.Response:
        started = time.perf_counter()
        extender = request.app[EXTENDER]
        try:
            body = await read_body(request, max_body, timeout)
        except BodyError as error:
            count("bad-request")
            return json_error(error.status, error.message)
        try:
            args = decode_extender_args(body)
        except ExtenderProtocolError as error:
            count("bad-request")
            return json_error(400, str(error))
        try:
            payload, outcome = run(extender, args)
        except Exception:
            log.exception("extender %s failed; answering fail-open", verb, extra={"pod": args.describe_pod()})
            payload, outcome = _fail_open(verb, args), "internal-error"
        count(outcome)
        elapsed = time.perf_counter() - started
        if duration is not None:
            duration.observe(elapsed)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "extender",
                extra={
                    "verb": verb,
                    "pod": args.describe_pod(),
                    "candidates": len(args.node_names),
                    "outcome": outcome,
                    "ms": round(elapsed * 1000, 3),
                },
            )
        return web.Response(body=payload, content_type="application/json")

    return endpoint


def add_extender_routes(
    app: web.Application,
    services: Any,
    extender_config: ExtenderConfig | None = None,
    *,
    prefix: str = DEFAULT_PREFIX,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> None:
    """Serve kube-scheduler's extender verbs on *app* from the same state and configuration.

    *extender_config* defaults to the scorers of limitguard's configuration (`extender:` section;
    LimitAware alone, weight 1, when it has none).
    """
    config = extender_config or ExtenderConfig(services.config.scorers)
    app[EXTENDER] = Extender(services.state, services.config, config)
    metrics: ExtenderMetrics | None
    try:
        metrics = ExtenderMetrics(services.metrics.registry)
    except (AttributeError, ValueError):  # no registry, or extender metrics already registered on it
        metrics = None
    settings = getattr(services, "settings", None)
    timeout = float(getattr(settings, "body_timeout_seconds", 10.0))
    prefix = "/" + prefix.strip("/")
    app.router.add_post(f"{prefix}/filter", _route("filter", _filter, metrics, max_body_bytes, timeout))
    app.router.add_post(
        f"{prefix}/prioritize", _route("prioritize", _prioritize, metrics, max_body_bytes, timeout)
    )
