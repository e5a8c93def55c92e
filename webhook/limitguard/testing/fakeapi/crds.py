"""Custom resources on the fake apiserver: a CRD installed (or not) at run time, as kube-apiserver's
apiextensions server serves them.

- Discovery: `GET /apis/<group>/<version>` lists the installed kinds (APIResourceList) and is 404 while
  none is installed, which is how clients find out that a CRD is absent.
- Create (POST, 201; 409 AlreadyExists), get, replace (PUT: `metadata.resourceVersion` is required,
  422 without it, 409 Conflict when stale; 404 when missing), delete (404 when missing), list (one
  namespace, or every namespace at the group path) with `labelSelector`, `limit` and `continue`.
- Validation against the CRD's `openAPIV3Schema` (types, enums, required: 422 Invalid, every
  problem listed) and pruning of fields the schema does not declare (a CRD's default), after which
  the object is stored and answered as pruned. metadata.name must be a DNS subdomain; an owner
  reference needs apiVersion, kind, name and uid; the body's namespace must be the path's.
- uid, creationTimestamp, generation (bumped when anything but metadata changes) are the server's.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web
from jsonschema import Draft202012Validator

from limitguard.testing.fakeapi.leases import LeaseRoutes
from limitguard.testing.fakeapi.objects import LabelSelector, RequestSeen, SelectorError

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
NOT_FOUND = "the server could not find the requested resource"


@dataclass(frozen=True)
class ServedKind:
    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    validator: Draft202012Validator
    schema: Mapping[str, Any]

    @property
    def store(self) -> str:
        """The kind's key in the store (its plural.group, as `kubectl get` names it)."""
        return f"{self.plural}.{self.group}"


def prune(value: Any, schema: Any) -> Any:
    """Drop what a structural schema does not declare (apiextensions pruning)."""
    if not isinstance(schema, Mapping) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            return {key: prune(item, properties[key]) for key, item in value.items() if key in properties}
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return {key: prune(item, extra) for key, item in value.items()}
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [prune(item, schema["items"]) for item in value]
    return value


def _path(error: Any) -> str:
    parts = ""
    for part in error.absolute_path:
        parts += f"[{part}]" if isinstance(part, int) else (f".{part}" if parts else str(part))
    return parts or "<root>"


class CustomResourceRoutes(LeaseRoutes):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crds: dict[tuple[str, str, str], ServedKind] = {}  # (group, version, plural)

    def install_crd(self, crd: Mapping[str, Any]) -> None:
        """Serve every version of an apiextensions.k8s.io/v1 CustomResourceDefinition manifest."""
        spec = crd["spec"]
        names = spec["names"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            schema = version["schema"]["openAPIV3Schema"]
            served = ServedKind(
                spec["group"],
                version["name"],
                names["plural"],
                names.get("singular", names["kind"].lower()),
                names["kind"],
                spec["scope"] == "Namespaced",
                Draft202012Validator(schema),
                schema,
            )
            self.crds[(served.group, served.version, served.plural)] = served
            self.objects.setdefault(served.store, {})
            self._failures.setdefault(served.store, [])

    def uninstall_crd(self, group: str, plural: str) -> None:
        """Remove a CRD: its objects go with it, as the apiextensions server deletes them."""
        for key in [key for key in self.crds if key[0] == group and key[2] == plural]:
            self.objects.pop(self.crds.pop(key).store, None)

    def custom_objects(self, group: str, plural: str) -> list[dict[str, Any]]:
        """The stored objects of a kind, as served (for a test's assertions)."""
        stored = self.objects.get(f"{plural}.{group}", {})
        return [orjson.loads(item.body) for _, item in sorted(stored.items())]

    def _add_custom_routes(self, app: web.Application) -> None:
        prefix = "/apis/{group}/{version}"
        app.router.add_get(prefix, self._discovery)
        for path in (prefix + "/{plural}", prefix + "/namespaces/{namespace}/{plural}"):
            app.router.add_get(path, self._custom_list)
            app.router.add_post(path, self._custom_create)
        for path in (prefix + "/{plural}/{name}", prefix + "/namespaces/{namespace}/{plural}/{name}"):
            app.router.add_get(path, self._custom_get)
            app.router.add_put(path, self._custom_replace)
            app.router.add_delete(path, self._custom_delete)

    # -- helpers ----------------------------------------------------------------------------------
    def _served(self, request: web.Request) -> ServedKind | web.Response:
        info = request.match_info
        served = self.crds.get((info["group"], info["version"], info.get("plural", "")))
        namespaced_path = "namespace" in info
        if served is None or (namespaced_path and not served.namespaced):
            return self._status(404, "NotFound", NOT_FOUND)
        return served

    def _gate(self, request: web.Request, served: ServedKind) -> web.Response | None:
        self.requests.append(RequestSeen(served.store, False, {"method": request.method, **request.query}))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures[served.store]:
            status = self._failures[served.store].pop(0)
            return self._status(status, "InternalError" if status >= 500 else "TooManyRequests", "injected")
        return None

    def _missing(self, served: ServedKind, name: str) -> web.Response:
        return self._status(404, "NotFound", f'{served.plural}.{served.group} "{name}" not found')

    def _invalid(self, served: ServedKind, name: str, problems: list[str]) -> web.Response:
        text = f'{served.kind}.{served.group} "{name}" is invalid: ' + ", ".join(problems)
        return self._status(422, "Invalid", text)

    async def _body(
        self, request: web.Request, served: ServedKind, name: str | None
    ) -> dict[str, Any] | web.Response:
        try:
            obj = orjson.loads(await request.read())
        except orjson.JSONDecodeError as error:
            return self._status(400, "BadRequest", f"invalid JSON: {error}")
        api_version = f"{served.group}/{served.version}"
        if (
            not isinstance(obj, dict)
            or obj.get("kind") != served.kind
            or obj.get("apiVersion") != api_version
        ):
            return self._status(400, "BadRequest", f"expected a {served.kind} of {api_version}")
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        namespace = request.match_info.get("namespace", "")
        if served.namespaced and metadata.get("namespace") not in (None, "", namespace):
            return self._status(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        given = str(metadata.get("name") or "")
        if name is not None and given != name:
            return self._status(
                400, "BadRequest", "the name of the object does not match the name on the URL"
            )
        problems = [f"{_path(e)}: {e.message}" for e in served.validator.iter_errors(obj)]
        if not given or not _DNS_SUBDOMAIN.match(given) or len(given) > 253:
            problems.append(
                f"metadata.name: Invalid value: {given!r}: a lowercase RFC 1123 subdomain is required"
            )
        for index, owner in enumerate(metadata.get("ownerReferences") or []):
            for field in ("apiVersion", "kind", "name", "uid"):
                if not (owner or {}).get(field):
                    problems.append(f"metadata.ownerReferences[{index}].{field}: Required value")
        if problems:
            return self._invalid(served, given, problems)
        pruned = prune(obj, served.schema)
        pruned["metadata"] = {**metadata, **({"namespace": namespace} if served.namespaced else {})}
        if not served.namespaced:
            pruned["metadata"].pop("namespace", None)
        return pruned

    def _key(self, served: ServedKind, request: web.Request, name: str) -> str:
        namespace = request.match_info.get("namespace", "")
        return f"{namespace}/{name}" if served.namespaced else name

    def _stored(self, served: ServedKind, key: str) -> dict[str, Any] | None:
        stored = self.objects[served.store].get(key)
        return orjson.loads(stored.body) if stored is not None else None

    def _answer(self, served: ServedKind, key: str, status: int = 200) -> web.Response:
        return web.Response(
            status=status, body=self.objects[served.store][key].body, content_type="application/json"
        )

    # -- handlers ---------------------------------------------------------------------------------
    async def _discovery(self, request: web.Request) -> web.Response:
        self.requests.append(RequestSeen("discovery", False, dict(request.match_info)))
        group, version = request.match_info["group"], request.match_info["version"]
        kinds = [s for (g, v, _), s in sorted(self.crds.items()) if (g, v) == (group, version)]
        if not kinds:
            return self._status(404, "NotFound", NOT_FOUND)
        verbs = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
        resources = [
            {
                "name": s.plural,
                "singularName": s.singular,
                "namespaced": s.namespaced,
                "kind": s.kind,
                "verbs": verbs,
            }
            for s in kinds
        ]
        body = {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}",
            "resources": resources,
        }
        return web.json_response(body)

    async def _custom_list(self, request: web.Request) -> web.Response:
        served = self._served(request)
        if isinstance(served, web.Response):
            return served
        if (refused := self._gate(request, served)) is not None:
            return refused
        try:
            selector = LabelSelector.parse(request.query.get("labelSelector", ""))
        except SelectorError as error:
            return self._status(400, "BadRequest", str(error))
        namespace = request.match_info.get("namespace")
        items = []
        for key, stored in sorted(self.objects[served.store].items()):
            obj = orjson.loads(stored.body)
            if namespace is not None and not key.startswith(f"{namespace}/"):
                continue
            if selector.matches((obj.get("metadata") or {}).get("labels") or {}):
                items.append(obj)
        start = (
            int(base64.urlsafe_b64decode(request.query["continue"]).decode())
            if request.query.get("continue")
            else 0
        )
        limit = int(request.query.get("limit") or 0) or len(items) or 1
        page = items[start : start + limit]
        metadata: dict[str, Any] = {"resourceVersion": str(self.rv)}
        if start + limit < len(items):
            metadata["continue"] = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
        body = {
            "kind": f"{served.kind}List",
            "apiVersion": f"{served.group}/{served.version}",
            "metadata": metadata,
            "items": page,
        }
        return web.json_response(body)

    async def _custom_create(self, request: web.Request) -> web.Response:
        served = self._served(request)
        if isinstance(served, web.Response):
            return served
        if served.namespaced and "namespace" not in request.match_info:
            return self._status(405, "MethodNotAllowed", "create a namespaced object in its namespace")
        if (refused := self._gate(request, served)) is not None:
            return refused
        obj = await self._body(request, served, None)
        if isinstance(obj, web.Response):
            return obj
        name = obj["metadata"]["name"]
        key = self._key(served, request, name)
        if key in self.objects[served.store]:
            return self._status(
                409, "AlreadyExists", f'{served.plural}.{served.group} "{name}" already exists'
            )
        obj["metadata"].pop("resourceVersion", None)
        obj["metadata"].update(
            uid=f"{served.singular}-uid-{self.rv + 1}", creationTimestamp="2026-01-01T00:00:00Z", generation=1
        )
        self.apply(served.store, obj)
        return self._answer(served, key, 201)

    async def _custom_get(self, request: web.Request) -> web.Response:
        served = self._served(request)
        if isinstance(served, web.Response):
            return served
        if (refused := self._gate(request, served)) is not None:
            return refused
        key = self._key(served, request, request.match_info["name"])
        if key not in self.objects[served.store]:
            return self._missing(served, request.match_info["name"])
        return self._answer(served, key)

    async def _custom_replace(self, request: web.Request) -> web.Response:
        served = self._served(request)
        if isinstance(served, web.Response):
            return served
        if (refused := self._gate(request, served)) is not None:
            return refused
        name = request.match_info["name"]
        obj = await self._body(request, served, name)
        if isinstance(obj, web.Response):
            return obj
        key = self._key(served, request, name)
        previous = self._stored(served, key)
        if previous is None:
            return self._missing(served, name)
        expected = obj["metadata"].get("resourceVersion")
        if not expected:
            return self._invalid(
                served,
                name,
                ["metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"],
            )
        if str(expected) != previous["metadata"]["resourceVersion"]:
            return self._status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {served.plural}.{served.group} "{name}": the object has been '
                "modified; please apply your changes to the latest version and try again",
            )
        old_meta = previous["metadata"]
        for kept in ("uid", "creationTimestamp", "generation"):
            obj["metadata"][kept] = old_meta.get(kept)
        if {k: v for k, v in obj.items() if k != "metadata"} != {
            k: v for k, v in previous.items() if k != "metadata"
        }:
            obj["metadata"]["generation"] = int(old_meta.get("generation") or 1) + 1
        self.apply(served.store, obj)
        return self._answer(served, key)

    async def _custom_delete(self, request: web.Request) -> web.Response:
        served = self._served(request)
        if isinstance(served, web.Response):
            return served
        if (refused := self._gate(request, served)) is not None:
            return refused
        name = request.match_info["name"]
        key = self._key(served, request, name)
        if key not in self.objects[served.store]:
            return self._missing(served, name)
        self.delete(served.store, key)
        return self._status(200, "", "deleted")
