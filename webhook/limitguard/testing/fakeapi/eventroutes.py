"""events.k8s.io/v1 Events and namespaced ConfigMap list/watch on the fake apiserver.

Events as kube-apiserver validates them on the events.k8s.io/v1 API (pkg/apis/core/validation/events.go,
strict for this group): metadata.name a DNS subdomain; eventTime required; type Normal or Warning;
reportingController required and a qualified name; reportingInstance, action and reason required and
at most 128 characters; note at most 1024; an event about a cluster-scoped object only in `default`
or `kube-system`; a series with count >= 2 and a lastObservedTime. POST creates (409 AlreadyExists);
PATCH takes a strategic-merge or merge patch (415 for others; 404 when missing) and refuses changes
to the immutable fields (422); GET lists a namespace's events.

ConfigMaps are listed and watched at `/api/v1/namespaces/{ns}/configmaps` like the core kinds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

from limitguard.testing.fakeapi.crds import CustomResourceRoutes
from limitguard.testing.fakeapi.objects import FieldSelector, RequestSeen, SelectorError

EVENTS = "events"
EVENTS_PREFIX = "/apis/events.k8s.io/v1/namespaces/{namespace}/events"
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
IMMUTABLE = (
    "regarding",
    "related",
    "reason",
    "note",
    "type",
    "eventTime",
    "action",
    "reportingController",
    "reportingInstance",
)
MERGE_PATCHES = ("application/strategic-merge-patch+json", "application/merge-patch+json")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 (for an Event's maps a strategic merge patch merges the same way)."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def event_problems(event: Mapping[str, Any], namespace: str) -> list[str]:
    problems = []
    name = str((event.get("metadata") or {}).get("name") or "")
    if not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
        problems.append(f"metadata.name: Invalid value: {name!r}")
    series = event.get("series")
    if series is not None:
        if not isinstance(series.get("count"), int) or series["count"] < 2:
            problems.append("series.count: Invalid value: should be at least 2")
        if not series.get("lastObservedTime"):
            problems.append("series.lastObservedTime: Required value")
    if not event.get("eventTime"):
        problems.append("eventTime: Required value")
    if event.get("type") not in ("Normal", "Warning"):
        problems.append(f"type: Invalid value: has invalid value: {event.get('type')}")
    regarding = event.get("regarding") or {}
    if not regarding.get("namespace") and namespace not in ("default", "kube-system"):
        problems.append("involvedObject.namespace: Invalid value: does not match event.namespace")
    controller = str(event.get("reportingController") or "")
    if not controller:
        problems.append("reportingController: Required value")
    elif not _QUALIFIED.match(controller):
        problems.append(f"reportingController: Invalid value: {controller!r}")
    for field, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
        value = str(event.get(field) or "")
        if not value:
            problems.append(f"{field}: Required value")
        elif len(value) > limit:
            problems.append(f"{field}: Invalid value: can have at most {limit} characters")
    if len(str(event.get("note") or "")) > 1024:
        problems.append("message: Invalid value: can have at most 1024 characters")
    return problems


class EventRoutes(CustomResourceRoutes):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.objects.setdefault(EVENTS, {})
        self._failures.setdefault(EVENTS, [])

    def events(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Stored events (of one namespace), oldest first (for a test's assertions)."""
        stored = sorted(self.objects[EVENTS].values(), key=lambda item: item.rv)
        found = [orjson.loads(item.body) for item in stored]
        return [e for e in found if namespace is None or e["metadata"]["namespace"] == namespace]

    def _add_event_routes(self, app: web.Application) -> None:
        app.router.add_get(EVENTS_PREFIX, self._event_list)
        app.router.add_post(EVENTS_PREFIX, self._event_create)
        app.router.add_patch(EVENTS_PREFIX + "/{name}", self._event_patch)
        app.router.add_get("/api/v1/namespaces/{namespace}/configmaps", self._configmaps)

    def _event_gate(self, request: web.Request) -> web.Response | None:
        self.requests.append(RequestSeen(EVENTS, False, dict(request.query)))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures[EVENTS]:
            status = self._failures[EVENTS].pop(0)
            return self._status(status, "InternalError" if status >= 500 else "TooManyRequests", "injected")
        return None

    def _event_invalid(self, name: str, problems: list[str]) -> web.Response:
        return self._status(
            422, "Invalid", f'Event.events.k8s.io "{name}" is invalid: ' + ", ".join(problems)
        )

    async def _event_list(self, request: web.Request) -> web.Response:
        if (refused := self._event_gate(request)) is not None:
            return refused
        items = self.events(request.match_info["namespace"])
        metadata = {"resourceVersion": str(self.rv)}
        return web.json_response(
            {"kind": "EventList", "apiVersion": "events.k8s.io/v1", "metadata": metadata, "items": items}
        )

    async def _event_create(self, request: web.Request) -> web.Response:
        if (refused := self._event_gate(request)) is not None:
            return refused
        namespace = request.match_info["namespace"]
        try:
            event = orjson.loads(await request.read())
        except orjson.JSONDecodeError as error:
            return self._status(400, "BadRequest", f"invalid JSON: {error}")
        if (
            not isinstance(event, dict)
            or event.get("apiVersion") != "events.k8s.io/v1"
            or event.get("kind") != "Event"
        ):
            return self._status(400, "BadRequest", "expected an Event of events.k8s.io/v1")
        metadata = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
        if metadata.get("namespace") not in (None, "", namespace):
            return self._status(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        event["metadata"] = {**metadata, "namespace": namespace}
        name = str(metadata.get("name") or "")
        if problems := event_problems(event, namespace):
            return self._event_invalid(name, problems)
        key = f"{namespace}/{name}"
        if key in self.objects[EVENTS]:
            return self._status(409, "AlreadyExists", f'events.events.k8s.io "{name}" already exists')
        event["metadata"].update(uid=f"event-uid-{self.rv + 1}", creationTimestamp="2026-01-01T00:00:00Z")
        self.apply(EVENTS, event)
        return web.Response(status=201, body=self.objects[EVENTS][key].body, content_type="application/json")

    async def _event_patch(self, request: web.Request) -> web.Response:
        if (refused := self._event_gate(request)) is not None:
            return refused
        if request.content_type not in MERGE_PATCHES:
            return self._status(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format: {request.content_type}",
            )
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        key = f"{namespace}/{name}"
        stored = self.objects[EVENTS].get(key)
        if stored is None:
            return self._status(404, "NotFound", f'events.events.k8s.io "{name}" not found')
        try:
            patch = orjson.loads(await request.read())
        except orjson.JSONDecodeError as error:
            return self._status(400, "BadRequest", f"invalid JSON: {error}")
        previous = orjson.loads(stored.body)
        event = merge_patch(previous, patch)
        changed = [field for field in IMMUTABLE if event.get(field) != previous.get(field)]
        problems = [f"{field}: Invalid value: field is immutable" for field in changed] + event_problems(
            event, namespace
        )
        if problems:
            return self._event_invalid(name, problems)
        self.apply(EVENTS, event)
        return web.Response(body=self.objects[EVENTS][key].body, content_type="application/json")

    async def _configmaps(self, request: web.Request) -> web.StreamResponse:
        """List and watch one namespace's ConfigMaps (the core kinds' handler, scoped by namespace)."""
        params = dict(request.query)
        watching = params.get("watch") in ("true", "1")
        self.requests.append(RequestSeen("configmaps", watching, params))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures["configmaps"]:
            return self._status(self._failures["configmaps"].pop(0), "InternalError", "injected")
        try:
            selector = FieldSelector.parse("configmaps", params.get("fieldSelector", ""))
        except SelectorError as error:
            return self._status(400, "BadRequest", str(error))
        scoped = FieldSelector(
            (("metadata.namespace", True, request.match_info["namespace"]), *selector.requirements)
        )
        if watching:
            return await self._watch(request, "configmaps", params, scoped)
        return self._list("configmaps", params, scoped)
