"""Single Nodes on the fake apiserver: GET and PATCH at `/api/v1/nodes/{name}`.

A PATCH is applied as kube-apiserver applies it (limitguard.testing.fakeapi.patches), stored with a
new resourceVersion and sent to the node watches as MODIFIED, like any write. `fail_next("node-writes",
n, status)` fails the next writes; `node_patches` lists the patches taken (name, content type, body)
for a test's or a benchmark's counts.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from limitguard.testing.fakeapi.objects import RequestSeen
from limitguard.testing.fakeapi.patches import PatchError, apply_node_patch
from limitguard.testing.fakeapi.routes import ListWatchRoutes

NODE_WRITES = "node-writes"


class NodeRoutes(ListWatchRoutes):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._failures[NODE_WRITES] = []
        self.node_patches: list[tuple[str, str, bytes]] = []

    def _add_node_routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/nodes/{name}", self._node_get)
        app.router.add_patch("/api/v1/nodes/{name}", self._node_patch)

    def _node_gate(self, request: web.Request, failures: str) -> web.Response | None:
        self.requests.append(RequestSeen("nodes", False, dict(request.query)))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures[failures]:
            status = self._failures[failures].pop(0)
            return self._status(status, "InternalError" if status >= 500 else "TooManyRequests", "injected")
        return None

    @staticmethod
    def _node_missing(name: str) -> web.Response:
        return ListWatchRoutes._status(404, "NotFound", f'nodes "{name}" not found')

    async def _node_get(self, request: web.Request) -> web.Response:
        """The current node (a resourceVersion parameter is served from the current state too)."""
        if (refused := self._node_gate(request, "nodes")) is not None:
            return refused
        stored = self.objects["nodes"].get(request.match_info["name"])
        if stored is None:
            return self._node_missing(request.match_info["name"])
        return web.Response(body=stored.body, content_type="application/json")

    async def _node_patch(self, request: web.Request) -> web.Response:
        if (refused := self._node_gate(request, NODE_WRITES)) is not None:
            return refused
        name = request.match_info["name"]
        stored = self.objects["nodes"].get(name)
        if stored is None:
            return self._node_missing(name)
        content_type = request.headers.get("Content-Type", "")
        body = await request.read()
        try:
            patched = apply_node_patch(orjson.loads(stored.body), content_type, body, name)
        except PatchError as error:
            return self._status(error.status, error.reason, error.message)
        self.node_patches.append((name, content_type, body))
        self.apply("nodes", patched)
        return web.Response(body=self.objects["nodes"][name].body, content_type="application/json")
