"""AdmissionReview parsing and response building (the Request / Response split of controller-runtime).

Both admission.k8s.io/v1 and v1beta1 are read, and every response is written in the version the
request came in, echoing its uid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from limitguard.core.response import Response
from limitguard.errors import LimitguardError

API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
_STATUS_REASONS = {400: "BadRequest", 403: "Forbidden", 422: "Invalid", 503: "ServiceUnavailable"}


class ReviewError(LimitguardError, ValueError):
    """A body that is not an AdmissionReview we can answer (HTTP 400)."""


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ cost 15,000 instructions more a request
class AdmissionRequest:
    api_version: str
    uid: str
    group: str
    resource: str
    sub_resource: str
    kind: str
    operation: str
    namespace: str
    name: str
    object: Any
    old_object: Any
    dry_run: bool

    @property
    def target(self) -> str:
        """`resource/subresource` as webhooks rules name it (e.g. `pods/binding`)."""
        return target_of(self.resource, self.sub_resource)

    def object_name(self) -> str:
        """The object's name as logs and messages give it: the request's, else its `metadata.name`;
        an object created with only `metadata.generateName` (the mutating webhook sees no name yet,
        nor does a review written by hand) is `prefix*`, its review's uid telling it apart."""
        name = self.name
        if not name:
            metadata = self.object.get("metadata") if type(self.object) is dict else None
            if type(metadata) is dict:
                name = metadata.get("name") or ""
                prefix = metadata.get("generateName")
                if not name and prefix and type(prefix) is str:
                    name = prefix + "*"
                name = name if type(name) is str else ""
        return name

    def describe(self) -> str:
        """`namespace/name` for the logs (`object_name`)."""
        name = self.object_name()
        return f"{self.namespace}/{name}" if self.namespace else name


def target_of(resource: str, sub_resource: str) -> str:
    """`resource/subresource` as webhooks rules name it (e.g. `pods/binding`), `resource` alone."""
    return f"{resource}/{sub_resource}" if sub_resource else resource


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if type(value) is not str:
        raise ReviewError(f"{where} must be a string")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if type(value) is not dict:  # orjson decodes every JSON object to a dict: no ABC check needed
        raise ReviewError(f"{where} must be an object")
    return value


def decode_review(body: bytes) -> AdmissionRequest:
    """Parse a request body; raises ReviewError with a message fit for the caller."""
    if not body:
        raise ReviewError("empty body: expected an AdmissionReview")
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise ReviewError(f"body is not valid JSON: {error}") from None
    if type(review) is not dict:
        raise ReviewError("body must be a JSON object (an AdmissionReview)")
    api_version = review.get("apiVersion")
    if review.get("kind") != "AdmissionReview" or api_version not in API_VERSIONS:
        raise ReviewError(f"expected kind AdmissionReview with apiVersion in {', '.join(API_VERSIONS)}")
    request = review.get("request")
    if type(request) is not dict:
        raise ReviewError("AdmissionReview has no request object")
    get = request.get
    uid = get("uid")
    if type(uid) is not str or not uid:
        raise ReviewError("request.uid must be a non-empty string")
    resource = _object(get("resource"), "request.resource")
    kind = _object(get("kind"), "request.kind")
    dry_run = get("dryRun")
    if dry_run is not None and type(dry_run) is not bool:
        raise ReviewError("request.dryRun must be a boolean")
    operation = _text(get("operation"), "request.operation")
    if not operation:
        raise ReviewError("request.operation is required")
    return AdmissionRequest(
        api_version,
        uid,
        _text(resource.get("group"), "request.resource.group"),
        _text(resource.get("resource"), "request.resource.resource"),
        _text(get("subResource"), "request.subResource"),
        _text(kind.get("kind"), "request.kind.kind"),
        operation,
        _text(get("namespace"), "request.namespace"),
        _text(get("name"), "request.name"),
        get("object"),
        get("oldObject"),
        dry_run is True,
    )


def encode_response(request: AdmissionRequest, response: Response) -> bytes:
    """The AdmissionReview answering *request*, as JSON bytes."""
    body: dict[str, Any] = {"uid": request.uid, "allowed": response.allowed}
    if not response.allowed:
        body["status"] = {
            "code": response.code,
            "message": response.message,
            "reason": _STATUS_REASONS.get(response.code, "BadRequest"),
        }
    if response.warnings:
        body["warnings"] = list(response.warnings)
    if response.patch:
        body["patchType"] = "JSONPatch"
        body["patch"] = response.patch.base64_text
    return orjson.dumps({"apiVersion": request.api_version, "kind": "AdmissionReview", "response": body})
