"""The optional plain-HTTP metrics listener (`serve --metrics-port`): /metrics and nothing else.

Prometheus can then scrape without the webhook's CA, and a NetworkPolicy can open this port to the
monitoring namespace only, while the HTTPS port stays reachable for the apiserver.
"""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from limitguard.http.endpoint import answer_unrouted_in_json
from limitguard.http.metrics import Metrics

METRICS = web.AppKey("metrics", Metrics)


async def metrics_only(request: web.Request) -> web.Response:
    response = web.Response(body=generate_latest(request.app[METRICS].registry))
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


def create_metrics_app(metrics: Metrics) -> web.Application:
    app = web.Application(client_max_size=1024)  # only GETs come here
    app[METRICS] = metrics
    app.router.add_get("/metrics", metrics_only)
    answer_unrouted_in_json(app)
    return app
