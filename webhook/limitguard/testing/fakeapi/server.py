"""FakeApiServer: the store, the list/watch routes and the Lease routes on one aiohttp app.

The /_fake/ control endpoints let a benchmark drive a server running in another process.
"""

from __future__ import annotations

import asyncio
import ssl

import orjson
from aiohttp import web

from limitguard.testing.fakeapi.certroutes import CertificateRoutes
from limitguard.testing.fakeapi.nodes import NodeRoutes
from limitguard.testing.fakeapi.objects import KIND_NAMES


class FakeApiServer(NodeRoutes, CertificateRoutes):
    """A list/watch apiserver for nodes, pods, namespaces, ConfigMaps, Leases, Events, Secrets,
    webhook configurations and custom resources, with GET and PATCH of single nodes (see the package
    docstring)."""

    # GET /version's gitVersion; a test sets another to play a control-plane upgrade.
    git_version = "v1.37.0"
    version_reads = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/version", self._version)
        for kind in KIND_NAMES:
            app.router.add_get(f"/api/v1/{kind}", self._handler(kind))
        self._add_lease_routes(app)
        self._add_node_routes(app)
        self._add_event_routes(app)
        self._add_certificate_routes(app)
        self._add_custom_routes(app)  # after every fixed /apis path: its patterns match them too
        app.router.add_post("/_fake/burst", self._burst)
        app.router.add_get("/_fake/rv", self._current_rv)
        app.router.add_post("/_fake/apply", self._apply_objects)
        return app

    async def start(
        self, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None
    ) -> str:
        self._runner = web.AppRunner(self.app(), shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"{'https' if ssl_context else 'http'}://{host}:{self.port}"

    async def stop(self) -> None:
        self.close_watches()
        for gate in self._gates.values():
            gate.set()
        for pause in self._pauses.values():
            pause.release()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _version(self, request: web.Request) -> web.Response:
        """version.Info; readable without credentials (system:public-info-viewer)."""
        self.version_reads += 1
        major, minor = self.git_version.lstrip("v").split(".")[:2]
        body = {"major": major, "minor": minor, "gitVersion": self.git_version, "platform": "linux/amd64"}
        return web.json_response(body)

    # -- benchmark control ----------------------------------------------------------------------
    async def _current_rv(self, request: web.Request) -> web.Response:
        return web.json_response({"rv": self.rv, "watchers": len(self.watchers)})

    async def _apply_objects(self, request: web.Request) -> web.Response:
        """Create or replace the objects of body `{"kind": "pods", "items": [...]}` in order, as a
        process driving the cluster through the API would; answers the last resourceVersion."""
        try:
            body = orjson.loads(await request.read())
            kind, items = body["kind"], body["items"]
            if kind not in KIND_NAMES or not isinstance(items, list):
                raise ValueError(f"kind must be one of {sorted(KIND_NAMES)} and items a list")
            objects = [
                item for item in items if isinstance(item, dict) and (item.get("metadata") or {}).get("name")
            ]
            if len(objects) != len(items):
                raise ValueError("every item needs metadata.name")
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            return web.json_response({"error": str(error)}, status=400)
        for obj in objects:
            self.apply(kind, obj)
        return web.json_response({"rv": self.rv})

    async def _burst(self, request: web.Request) -> web.Response:
        """Modify `count` pods (bumping a label); answers the last resourceVersion."""
        count = int(request.query.get("count", "10000"))
        pods = list(self.objects["pods"].values())
        modified = []
        for index in range(count):  # prepared first, so the burst itself goes out as fast as possible
            obj = orjson.loads(pods[index % len(pods)].body)
            obj["metadata"].setdefault("labels", {})["burst"] = str(index)
            modified.append(obj)
        for index, obj in enumerate(modified):
            self.apply("pods", obj)
            if index % 1000 == 999:
                await asyncio.sleep(0)  # let the watch writers drain while the burst goes on
        return web.json_response({"rv": self.rv})
