"""Secrets and admission webhook configurations on the fake apiserver: what the chart's certificate
Jobs (`limitguard certs --secret`, `--patch-webhook-configuration`) read and write.

Secrets at `/api/v1/namespaces/{ns}/secrets[/{name}]`: GET (404 NotFound), POST (201; 409
AlreadyExists; 400 for a namespace other than the path's or a data value that is not base64, as
decoding `[]byte` fails; 422 Invalid as pkg/apis/core/validation/validation.go `ValidateSecret`:
a name that is not a DNS subdomain, a data key that is not a ConfigMap key, more than 1 MiB of
data, a `kubernetes.io/tls` Secret without `tls.crt` or `tls.key`), DELETE (a Status of Success).

Mutating and validating webhook configurations (admissionregistration.k8s.io/v1, cluster-scoped):
POST, GET, DELETE, and PATCH as staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go
applies it: a JSON patch (400 when it does not decode, 413 past 10000 operations, 422 when an
operation fails, a `test` included) or a merge patch; 415 for another type (strategic merge and
server-side apply are not reproduced). A caBundle that is not base64 is 422, as decoding the
patched object fails. Their other fields are not validated.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import jsonpatch
import orjson
from aiohttp import web

from limitguard.testing.fakeapi.eventroutes import EventRoutes, merge_patch
from limitguard.testing.fakeapi.objects import RequestSeen, object_key
from limitguard.testing.fakeapi.routes import ListWatchRoutes

SECRETS = "secrets"
SECRETS_PREFIX = "/api/v1/namespaces/{namespace}/secrets"
ADMISSION_PREFIX = "/apis/admissionregistration.k8s.io/v1"
WEBHOOK_CONFIGURATIONS = {
    "mutatingwebhookconfigurations": "MutatingWebhookConfiguration",
    "validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
}
MAX_SECRET_BYTES = 1024 * 1024  # pkg/apis/core/types.go MaxSecretSize
MAX_JSON_PATCH_OPERATIONS = 10000  # patch.go maxJSONPatchOperations
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_CONFIG_MAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def secret_problems(secret: dict[str, Any], data: dict[str, bytes]) -> list[str]:
    """ValidateSecret's findings for the fields the fake stores."""
    problems = []
    name = str((secret.get("metadata") or {}).get("name") or "")
    if not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
        problems.append(f"metadata.name: Invalid value: {name!r}")
    for key in data:
        if not _CONFIG_MAP_KEY.match(key) or len(key) > 253:
            problems.append(
                f"data[{key}]: Invalid value: {key!r}: a valid config key must consist of "
                "alphanumeric characters, '-', '_' or '.'"
            )
    if sum(len(value) for value in data.values()) > MAX_SECRET_BYTES:
        problems.append(f"data: Too long: may not be more than {MAX_SECRET_BYTES} bytes")
    if secret.get("type") == "kubernetes.io/tls":
        problems += [f"data[{key}]: Required value" for key in ("tls.crt", "tls.key") if key not in data]
    return problems


def _base64_values(values: Any) -> dict[str, bytes] | None:
    if values is None:
        return {}
    if not isinstance(values, dict):
        return None
    try:
        return {str(key): base64.b64decode(value, validate=True) for key, value in values.items()}
    except (binascii.Error, TypeError, ValueError):
        return None


def _ca_bundles_decode(configuration: dict[str, Any]) -> bool:
    for webhook in configuration.get("webhooks") or []:
        bundle = (webhook.get("clientConfig") or {}).get("caBundle") if isinstance(webhook, dict) else None
        if bundle is not None and _base64_values({"caBundle": bundle}) is None:
            return False
    return True


class CertificateRoutes(EventRoutes):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for kind in (SECRETS, *WEBHOOK_CONFIGURATIONS):
            self.objects.setdefault(kind, {})
            self._failures.setdefault(kind, [])

    def stored(self, kind: str, key: str) -> dict[str, Any] | None:
        """One Secret (`namespace/name`) or webhook configuration (`name`) as stored, or None."""
        found = self.objects[kind].get(key)
        return orjson.loads(found.body) if found is not None else None

    def _add_certificate_routes(self, app: web.Application) -> None:
        app.router.add_post(SECRETS_PREFIX, self._secret_create)
        app.router.add_get(SECRETS_PREFIX + "/{name}", self._secret_get)
        app.router.add_delete(SECRETS_PREFIX + "/{name}", self._secret_delete)
        for plural in WEBHOOK_CONFIGURATIONS:
            collection = f"{ADMISSION_PREFIX}/{plural}"
            app.router.add_post(collection, self._configuration_create)
            app.router.add_get(collection + "/{name}", self._configuration_get)
            app.router.add_patch(collection + "/{name}", self._configuration_patch)
            app.router.add_delete(collection + "/{name}", self._configuration_delete)

    def _certificate_gate(self, request: web.Request, kind: str) -> web.Response | None:
        """Authentication and injected failures, as for the other kinds."""
        self.requests.append(RequestSeen(kind, False, dict(request.query)))
        if self.token is not None and not self._authorized(request.headers.get("Authorization", "")):
            return self._status(401, "Unauthorized", "Unauthorized")
        if self._failures[kind]:
            status = self._failures[kind].pop(0)
            return self._status(status, "InternalError" if status >= 500 else "TooManyRequests", "injected")
        return None

    @staticmethod
    async def _json_body(request: web.Request) -> tuple[Any, web.Response | None]:
        try:
            return orjson.loads(await request.read()), None
        except orjson.JSONDecodeError as error:
            return None, ListWatchRoutes._status(400, "BadRequest", f"invalid JSON: {error}")

    def _created(self, kind: str, obj: dict[str, Any]) -> web.Response:
        obj["metadata"].update(uid=f"{kind}-uid-{self.rv + 1}", creationTimestamp="2026-01-01T00:00:00Z")
        self.apply(kind, obj)
        body = self.objects[kind][object_key(obj)].body
        return web.Response(status=201, body=body, content_type="application/json")

    @staticmethod
    def _deleted(kind: str, name: str) -> web.Response:
        details = {"name": name, "kind": kind}
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
        return web.json_response(body)

    # -- Secrets ----------------------------------------------------------------------------------
    async def _secret_create(self, request: web.Request) -> web.Response:
        if (refused := self._certificate_gate(request, SECRETS)) is not None:
            return refused
        namespace = request.match_info["namespace"]
        secret, malformed = await self._json_body(request)
        if malformed is not None:
            return malformed
        if not isinstance(secret, dict) or secret.get("kind") not in (None, "Secret"):
            return self._status(400, "BadRequest", "expected a v1 Secret")
        metadata = secret.get("metadata") if isinstance(secret.get("metadata"), dict) else {}
        if metadata.get("namespace") not in (None, "", namespace):
            return self._status(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        data = _base64_values(secret.get("data"))
        if data is None:
            return self._status(
                400, "BadRequest", 'Secret in version "v1" cannot be handled: data: illegal base64 data'
            )
        secret["metadata"] = {**metadata, "namespace": namespace}
        name = str(metadata.get("name") or "")
        if problems := secret_problems(secret, data):
            return self._status(422, "Invalid", f'Secret "{name}" is invalid: ' + ", ".join(problems))
        if f"{namespace}/{name}" in self.objects[SECRETS]:
            return self._status(409, "AlreadyExists", f'secrets "{name}" already exists')
        return self._created(SECRETS, secret)

    async def _secret_get(self, request: web.Request) -> web.Response:
        if (refused := self._certificate_gate(request, SECRETS)) is not None:
            return refused
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        found = self.objects[SECRETS].get(f"{namespace}/{name}")
        if found is None:
            return self._status(404, "NotFound", f'secrets "{name}" not found')
        return web.Response(body=found.body, content_type="application/json")

    async def _secret_delete(self, request: web.Request) -> web.Response:
        if (refused := self._certificate_gate(request, SECRETS)) is not None:
            return refused
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        if f"{namespace}/{name}" not in self.objects[SECRETS]:
            return self._status(404, "NotFound", f'secrets "{name}" not found')
        self.delete(SECRETS, f"{namespace}/{name}")
        return self._deleted(SECRETS, name)

    # -- webhook configurations -------------------------------------------------------------------
    @staticmethod
    def _plural(request: web.Request) -> str:
        return request.path.removeprefix(ADMISSION_PREFIX + "/").split("/", 1)[0]

    async def _configuration_create(self, request: web.Request) -> web.Response:
        plural = self._plural(request)
        if (refused := self._certificate_gate(request, plural)) is not None:
            return refused
        configuration, malformed = await self._json_body(request)
        if malformed is not None:
            return malformed
        name = str(((configuration or {}).get("metadata") or {}).get("name") or "")
        if not isinstance(configuration, dict) or not _DNS_SUBDOMAIN.match(name):
            return self._status(422, "Invalid", f"{WEBHOOK_CONFIGURATIONS[plural]} {name!r} is invalid")
        if not _ca_bundles_decode(configuration):
            return self._status(400, "BadRequest", "caBundle: illegal base64 data")
        if name in self.objects[plural]:
            return self._status(
                409, "AlreadyExists", f'{plural}.admissionregistration.k8s.io "{name}" already exists'
            )
        configuration.setdefault("apiVersion", "admissionregistration.k8s.io/v1")
        configuration.setdefault("kind", WEBHOOK_CONFIGURATIONS[plural])
        return self._created(plural, configuration)

    def _configuration_missing(self, plural: str, name: str) -> web.Response:
        return self._status(404, "NotFound", f'{plural}.admissionregistration.k8s.io "{name}" not found')

    async def _configuration_get(self, request: web.Request) -> web.Response:
        plural, name = self._plural(request), request.match_info["name"]
        if (refused := self._certificate_gate(request, plural)) is not None:
            return refused
        found = self.objects[plural].get(name)
        if found is None:
            return self._configuration_missing(plural, name)
        return web.Response(body=found.body, content_type="application/json")

    async def _configuration_delete(self, request: web.Request) -> web.Response:
        plural, name = self._plural(request), request.match_info["name"]
        if (refused := self._certificate_gate(request, plural)) is not None:
            return refused
        if name not in self.objects[plural]:
            return self._configuration_missing(plural, name)
        self.delete(plural, name)
        return self._deleted(plural, name)

    async def _configuration_patch(self, request: web.Request) -> web.Response:
        plural, name = self._plural(request), request.match_info["name"]
        if (refused := self._certificate_gate(request, plural)) is not None:
            return refused
        found = self.objects[plural].get(name)
        if found is None:
            return self._configuration_missing(plural, name)
        patch, malformed = await self._json_body(request)
        if malformed is not None:
            return malformed
        current = orjson.loads(found.body)
        if request.content_type == "application/json-patch+json":
            if not isinstance(patch, list):
                return self._status(400, "BadRequest", "a JSON patch is a list of operations")
            if len(patch) > MAX_JSON_PATCH_OPERATIONS:
                message = f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}"
                return self._status(413, "RequestEntityTooLarge", f"{message}, got {len(patch)}")
            try:
                patched = jsonpatch.JsonPatch(patch).apply(current)
            except jsonpatch.InvalidJsonPatch as error:
                return self._status(400, "BadRequest", str(error))
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as error:
                return self._status(422, "Invalid", str(error))  # a failed `test` too
        elif request.content_type == "application/merge-patch+json":
            patched = merge_patch(current, patch)
        else:
            return self._status(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format: {request.content_type}",
            )
        if not isinstance(patched, dict) or not _ca_bundles_decode(patched):
            return self._status(422, "Invalid", "caBundle: illegal base64 data")
        patched["metadata"] = {**(patched.get("metadata") or {}), "name": name}
        self.apply(plural, patched)
        return web.Response(body=self.objects[plural][name].body, content_type="application/json")
