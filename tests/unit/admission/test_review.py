"""decode_review: every field read, and every malformed review refused with the field it names."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from limitguard.admission.review import AdmissionRequest, ReviewError, decode_review, encode_response
from limitguard.core.response import patched


def review(**request: Any) -> bytes:
    fields = {"uid": "u-1", "operation": "CREATE", **request}
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": fields})


def test_a_binding_review_is_read_field_by_field() -> None:
    body = review(
        resource={"group": "", "version": "v1", "resource": "pods"},
        subResource="binding",
        kind={"group": "", "version": "v1", "kind": "Binding"},
        namespace="team",
        name="web-0",
        object={"target": {"name": "n1"}},
        oldObject=None,
        dryRun=True,
    )
    assert decode_review(body) == AdmissionRequest(
        api_version="admission.k8s.io/v1",
        uid="u-1",
        group="",
        resource="pods",
        sub_resource="binding",
        kind="Binding",
        operation="CREATE",
        namespace="team",
        name="web-0",
        object={"target": {"name": "n1"}},
        old_object=None,
        dry_run=True,
    )


def test_absent_and_null_fields_read_as_empty_and_v1beta1_is_kept() -> None:
    body = orjson.dumps(
        {
            "apiVersion": "admission.k8s.io/v1beta1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-2",
                "operation": "DELETE",
                "resource": None,
                "namespace": None,
                "dryRun": None,
            },
        }
    )
    request = decode_review(body)
    assert (request.api_version, request.group, request.resource, request.namespace, request.name) == (
        "admission.k8s.io/v1beta1",
        "",
        "",
        "",
        "",
    )
    assert request.dry_run is False and request.object is None and request.target == ""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty body: expected an AdmissionReview"),
        (b"[1]", "body must be a JSON object (an AdmissionReview)"),
        (b'{"kind": "AdmissionReview"}', "expected kind AdmissionReview with apiVersion in"),
        (review(uid=""), "request.uid must be a non-empty string"),
        (review(uid=7), "request.uid must be a non-empty string"),
        (review(resource=["pods"]), "request.resource must be an object"),
        (review(kind="Binding"), "request.kind must be an object"),
        (review(dryRun="yes"), "request.dryRun must be a boolean"),
        (review(dryRun=0), "request.dryRun must be a boolean"),
        (review(operation=None), "request.operation is required"),
        (review(operation=1), "request.operation must be a string"),
        (review(resource={"group": 1}), "request.resource.group must be a string"),
        (review(resource={"resource": ["pods"]}), "request.resource.resource must be a string"),
        (review(subResource=False), "request.subResource must be a string"),
        (review(kind={"kind": {}}), "request.kind.kind must be a string"),
        (review(namespace=0), "request.namespace must be a string"),
        (review(name=True), "request.name must be a string"),
    ],
)
def test_a_malformed_review_names_its_field(body: bytes, message: str) -> None:
    with pytest.raises(ReviewError) as raised:
        decode_review(body)
    assert str(raised.value).startswith(message)


def test_each_answer_carries_its_own_patch_whichever_came_before() -> None:
    """A patch's base64 is encoded once with it (a burst's answers share one patch): answers with
    other patches, alternating, must each carry their own."""
    request = decode_review(
        review(
            resource={"group": "", "version": "v1", "resource": "pods"},
            kind={"group": "", "version": "v1", "kind": "Pod"},
            object={},
        )
    )
    first = patched("defaulted", [{"op": "add", "path": "/metadata/labels", "value": {"a": "1"}}])
    second = patched("defaulted", [{"op": "add", "path": "/metadata/labels", "value": {"b": "2"}}])
    for response in (first, second, first, first, second):
        sent = orjson.loads(encode_response(request, response))["response"]
        assert base64.b64decode(sent["patch"]) == response.patch.encoded
