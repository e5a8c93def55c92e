"""The fake apiserver's custom resources, events and namespaced ConfigMaps behave as kube-apiserver's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from limitguard.core.config import ReportsApi
from limitguard.testing.fakeapi import FakeApiServer
from tests.reportschemas import CRD_FILES, crd

REPORTS = "/apis/openreports.io/v1alpha1/namespaces/shop/reports"


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeApiServer, aiohttp.ClientSession, str]]:
    server = FakeApiServer()
    url = await server.start()
    async with aiohttp.ClientSession() as session:
        yield server, session, url
    await server.stop()


def report(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "openreports.io/v1alpha1",
        "kind": "Report",
        "metadata": {"name": name, **extra.pop("metadata", {})},
        **extra,
    }


async def call(
    session: aiohttp.ClientSession, method: str, url: str, body: Any = None, **kwargs: Any
) -> tuple[int, Any]:
    async with session.request(method, url, json=body, **kwargs) as answer:
        return answer.status, await answer.json()


async def test_discovery_is_404_until_the_crd_is_installed(served) -> None:
    server, session, url = served
    assert (await call(session, "GET", url + "/apis/openreports.io/v1alpha1"))[0] == 404
    assert (await call(session, "POST", url + REPORTS, report("r")))[0] == 404
    for file in CRD_FILES[ReportsApi.OPENREPORTS]:
        server.install_crd(crd(file))
    status, listing = await call(session, "GET", url + "/apis/openreports.io/v1alpha1")
    assert status == 200 and {r["name"] for r in listing["resources"]} == {"reports", "clusterreports"}


async def test_schema_validation_pruning_and_replace_preconditions(served) -> None:
    server, session, url = served
    server.install_crd(crd(CRD_FILES[ReportsApi.OPENREPORTS][0]))
    status, body = await call(
        session, "POST", url + REPORTS, report("bad", results=[{"policy": "p", "result": "failed"}])
    )
    assert status == 422 and "results[0].result" in body["message"]
    status, created = await call(
        session, "POST", url + REPORTS, report("r", unknownField=1, metadata={"labels": {"a": "b"}})
    )
    assert status == 201 and "unknownField" not in created and created["metadata"]["uid"]
    assert (await call(session, "POST", url + REPORTS, report("r")))[0] == 409
    status, body = await call(session, "PUT", url + REPORTS + "/r", report("r", source="x"))
    assert status == 422 and "resourceVersion" in body["message"]
    stale = report("r", metadata={"resourceVersion": "1"})
    assert (await call(session, "PUT", url + REPORTS + "/r", stale))[0] == 409
    fresh = report("r", source="x", metadata={"resourceVersion": created["metadata"]["resourceVersion"]})
    status, replaced = await call(session, "PUT", url + REPORTS + "/r", fresh)
    assert status == 200 and replaced["metadata"]["generation"] == 2
    status, listed = await call(
        session, "GET", url + "/apis/openreports.io/v1alpha1/reports", params={"labelSelector": "a=b"}
    )
    assert status == 200 and listed["items"] == []  # the replace dropped the label
    owner = report("o", metadata={"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]})
    status, body = await call(session, "POST", url + REPORTS, owner)
    assert status == 422 and "ownerReferences[0].uid" in body["message"]


EVENT = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "n1.1"},
    "eventTime": "2026-01-01T00:00:00.000000Z",
    "reportingController": "limitguard.io/limitguard",
    "reportingInstance": "limitguard-0",
    "action": "CheckLimitRatio",
    "reason": "LimitRatioExceeded",
    "regarding": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    "note": "over",
    "type": "Warning",
}


async def test_events_are_validated_as_the_events_api_does(served) -> None:
    _, session, url = served
    path = "/apis/events.k8s.io/v1/namespaces/{}/events"
    status, body = await call(
        session, "POST", url + path.format("shop"), EVENT
    )  # a Node's event outside default
    assert status == 422 and "involvedObject.namespace" in body["message"]
    assert (await call(session, "POST", url + path.format("default"), {**EVENT, "reason": ""}))[0] == 422
    assert (await call(session, "POST", url + path.format("default"), EVENT))[0] == 201
    series = {"series": {"count": 1, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}}
    merge = {"Content-Type": "application/strategic-merge-patch+json"}
    target = url + path.format("default") + "/n1.1"
    async with session.patch(target, json=series, headers=merge) as answer:
        assert answer.status == 422  # count must be at least 2
    async with session.patch(
        target, json={"note": "changed"}, headers={"Content-Type": "application/json-patch+json"}
    ) as answer:
        assert answer.status == 415


SECRETS = "/api/v1/namespaces/lg/secrets"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def secret(name: str, data: dict[str, str], kind: str = "kubernetes.io/tls") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": kind, "metadata": {"name": name}, "data": data}


async def test_secrets_are_validated_as_the_apiserver_validates_them(served) -> None:
    server, session, url = served
    cert, key = "Y2VydA==", "a2V5"
    assert (await call(session, "GET", url + SECRETS + "/tls"))[0] == 404
    status, body = await call(session, "POST", url + SECRETS, secret("tls", {"ca.crt": cert}))
    assert status == 422 and "data[tls.crt]: Required value" in body["message"]
    assert "data[tls.key]: Required value" in body["message"]
    status, body = await call(session, "POST", url + SECRETS, secret("tls", {"tls.crt": "not base64!"}))
    assert status == 400
    status, body = await call(session, "POST", url + SECRETS, secret("Bad_Name", {"a/b": cert}, "Opaque"))
    assert status == 422 and "metadata.name" in body["message"] and "data[a/b]" in body["message"]
    other_namespace = {**secret("tls", {"tls.crt": cert, "tls.key": key})}
    other_namespace["metadata"]["namespace"] = "elsewhere"
    assert (await call(session, "POST", url + SECRETS, other_namespace))[0] == 400
    status, created = await call(
        session, "POST", url + SECRETS, secret("tls", {"tls.crt": cert, "tls.key": key})
    )
    assert status == 201 and created["metadata"]["namespace"] == "lg" and created["metadata"]["uid"]
    assert (await call(session, "POST", url + SECRETS, secret("tls", {"tls.crt": cert, "tls.key": key})))[
        0
    ] == 409
    assert server.stored("secrets", "lg/tls")["data"]["tls.key"] == key
    status, deleted = await call(session, "DELETE", url + SECRETS + "/tls")
    assert status == 200 and deleted["status"] == "Success"
    assert server.stored("secrets", "lg/tls") is None


async def test_webhook_configurations_take_json_and_merge_patches(served) -> None:
    server, session, url = served
    configuration = {"metadata": {"name": "lg"}, "webhooks": [{"name": "a.x.io", "clientConfig": {}}]}
    assert (await call(session, "POST", url + VALIDATING, configuration))[0] == 201
    json_patch = {"Content-Type": "application/json-patch+json"}

    async def patch(operations: Any, headers: dict[str, str] = json_patch) -> tuple[int, Any]:
        async with session.patch(
            url + VALIDATING + "/lg", data=orjson.dumps(operations), headers=headers
        ) as answer:
            return answer.status, await answer.json()

    guarded = [
        {"op": "test", "path": "/webhooks/0/name", "value": "b.x.io"},
        {"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "Y2E="},
    ]
    status, body = await patch(guarded)  # the test operation fails: nothing is written
    assert status == 422 and body["reason"] == "Invalid"
    assert (
        "caBundle"
        not in server.stored("validatingwebhookconfigurations", "lg")["webhooks"][0]["clientConfig"]
    )
    guarded[0]["value"] = "a.x.io"
    status, patched = await patch(guarded)
    assert status == 200 and patched["webhooks"][0]["clientConfig"]["caBundle"] == "Y2E="
    assert (await patch([{"op": "jump", "path": "/x"}]))[0] == 400
    assert (await patch([{"op": "test", "path": "/x", "value": 1}] * 10001))[0] == 413
    status, _ = await patch([{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": "!!"}])
    assert status == 422  # caBundle is bytes: it must be base64
    merge = {"Content-Type": "application/merge-patch+json"}
    status, patched = await patch({"metadata": {"labels": {"a": "b"}}}, merge)
    assert status == 200 and patched["metadata"]["labels"] == {"a": "b"}
    assert patched["webhooks"][0]["clientConfig"]["caBundle"] == "Y2E="
    assert (await patch({}, {"Content-Type": "application/apply-patch+yaml"}))[0] == 415
    missing = url + VALIDATING.replace("validating", "mutating") + "/lg"
    async with session.patch(missing, data=b"[]", headers=json_patch) as answer:
        assert answer.status == 404
