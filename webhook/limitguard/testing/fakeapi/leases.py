"""Leases (coordination.k8s.io/v1) on the fake apiserver: get, list, watch, create, replace, delete.

Replace is a compare-and-swap on `metadata.resourceVersion` (409 Conflict otherwise), which is what
client-go's resourcelock and limitguard's elector rely on.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from limitguard.testing.fakeapi.objects import (
    LEASE_API_VERSION,
    LEASES,
    LEASES_PREFIX,
    FieldSelector,
    RequestSeen,
    SelectorError,
)
from limitguard.testing.fakeapi.routes import ListWatchRoutes


class LeaseRoutes(ListWatchRoutes):
    def _add_lease_routes(self, app: web.Application) -> None:
        collection = LEASES_PREFIX
        app.router.add_get(collection, self._lease_collection)
        app.router.add_post(collection, self._lease_create)
        app.router.add_get(collection + "/{name}", self._lease_get)
        app.router.add_put(collection + "/{name}", self._lease_update)
        app.router.add_delete(collection + "/{name}", self._lease_delete)

    def _lease_gate(self, request: web.Request, watch: bool = False) -> web.Response | None:
        """Authentication and injected failures, as for the core kinds."""
        self.requests.append(RequestSeen(LEASES, watch, dict(request.query)))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures[LEASES]:
            status = self._failures[LEASES].pop(0)
            return self._status(status, "InternalError" if status >= 500 else "TooManyRequests", "injected")
        return None

    @staticmethod
    def _lease_missing(name: str) -> web.Response:
        return ListWatchRoutes._status(404, "NotFound", f'leases.coordination.k8s.io "{name}" not found')

    async def _lease_collection(self, request: web.Request) -> web.StreamResponse:
        params = dict(request.query)
        watching = params.get("watch") in ("true", "1")
        if (refused := self._lease_gate(request, watching)) is not None:
            return refused
        namespace = request.match_info["namespace"]
        try:
            selector = FieldSelector.parse(LEASES, params.get("fieldSelector", ""))
        except SelectorError as error:
            return self._status(400, "BadRequest", str(error))
        selector = FieldSelector((("metadata.namespace", True, namespace), *selector.requirements))
        if watching:
            return await self._watch(request, LEASES, params, selector)
        ordered = sorted(self.objects[LEASES].values(), key=lambda stored: stored.key)
        chosen = [stored.body for stored in ordered if selector.matches(stored.fields)]
        body = (
            b'{"kind":"LeaseList","apiVersion":"'
            + LEASE_API_VERSION.encode()
            + b'","metadata":'
            + orjson.dumps({"resourceVersion": str(self.rv)})
            + b',"items":['
            + b",".join(chosen)
            + b"]}"
        )
        return web.Response(body=body, content_type="application/json")

    async def _lease_get(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        stored = self.objects[LEASES].get(f"{namespace}/{name}")
        if stored is None:
            return self._lease_missing(name)
        return web.Response(body=stored.body, content_type="application/json")

    async def _lease_body(self, request: web.Request, name: str | None) -> dict[str, Any] | web.Response:
        """The decoded Lease of a write, or the error the apiserver would answer."""
        try:
            obj = orjson.loads(await request.read())
        except orjson.JSONDecodeError as error:
            return self._status(400, "BadRequest", f"invalid JSON: {error}")
        if (
            not isinstance(obj, dict)
            or obj.get("kind") != "Lease"
            or obj.get("apiVersion") != LEASE_API_VERSION
        ):
            return self._status(400, "BadRequest", f"expected a Lease of {LEASE_API_VERSION}")
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        namespace = request.match_info["namespace"]
        if metadata.get("namespace") not in (None, "", namespace):
            return self._status(400, "BadRequest", "the namespace of the object does not match the request")
        if not metadata.get("name") or (name is not None and metadata["name"] != name):
            return self._status(400, "BadRequest", "the name of the object does not match the request")
        duration = (obj.get("spec") or {}).get("leaseDurationSeconds")
        if duration is not None and (not isinstance(duration, int) or duration <= 0):
            return self._status(
                422,
                "Invalid",
                f'Lease.coordination.k8s.io "{metadata["name"]}" is invalid: '
                "spec.leaseDurationSeconds: Invalid value: must be greater than 0",
            )
        obj["metadata"] = {**metadata, "namespace": namespace}
        return obj

    async def _lease_create(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        obj = await self._lease_body(request, None)
        if isinstance(obj, web.Response):
            return obj
        metadata = obj["metadata"]
        key = f"{metadata['namespace']}/{metadata['name']}"
        if key in self.objects[LEASES]:
            return self._status(
                409, "AlreadyExists", f'leases.coordination.k8s.io "{metadata["name"]}" already exists'
            )
        metadata.pop("resourceVersion", None)
        metadata["uid"] = f"lease-uid-{self.rv + 1}"
        metadata["creationTimestamp"] = "2026-01-01T00:00:00Z"
        self.apply(LEASES, obj)
        return web.Response(status=201, body=self.objects[LEASES][key].body, content_type="application/json")

    async def _lease_update(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        name = request.match_info["name"]
        obj = await self._lease_body(request, name)
        if isinstance(obj, web.Response):
            return obj
        key = f"{request.match_info['namespace']}/{name}"
        stored = self.objects[LEASES].get(key)
        if stored is None:
            return self._lease_missing(name)
        expected = obj["metadata"].get("resourceVersion")
        if expected and str(expected) != str(stored.rv):
            return self._status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on leases.coordination.k8s.io "{name}": the object has '
                "been modified; please apply your changes to the latest version and try again",
            )
        previous = orjson.loads(stored.body)["metadata"]
        for kept in ("uid", "creationTimestamp"):  # server-owned metadata survives a replace
            obj["metadata"][kept] = previous.get(kept)
        self.apply(LEASES, obj)
        return web.Response(body=self.objects[LEASES][key].body, content_type="application/json")

    async def _lease_delete(self, request: web.Request) -> web.Response:
        if (refused := self._lease_gate(request)) is not None:
            return refused
        key = f"{request.match_info['namespace']}/{request.match_info['name']}"
        if key not in self.objects[LEASES]:
            return self._lease_missing(request.match_info["name"])
        self.delete(LEASES, key)
        return self._status(200, "", "deleted")
