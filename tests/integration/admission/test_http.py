"""The webhook over real TLS with real AdmissionReview payloads."""

import asyncio
import ssl

import orjson
import pytest

from limitguard.state.store import ClusterState
from limitguard.testing.examples import config, worked_example
from tests.support import binding, fixture, pod, pod_create, review


async def test_binding_denial_over_tls(start_server):
    server = await start_server(worked_example(), config())
    status, body = await server.post("/validate", binding("pod5", "node1", uid="abc-123"))
    assert status == 200
    assert body["apiVersion"] == "admission.k8s.io/v1" and body["kind"] == "AdmissionReview"
    response = body["response"]
    assert response["uid"] == "abc-123"
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert "cpu limit 4 exceeds remaining 0" in response["status"]["message"]
    assert "patch" not in response


async def test_v1beta1_is_answered_in_kind(start_server):
    server = await start_server(worked_example(), config())
    body = fixture("admissionreview-v1beta1-pod-create-extended-resources-cpupool.nokia-cpu-pooler.json")
    status, answer = await server.post("/validate", body)
    assert status == 200
    assert answer["apiVersion"] == "admission.k8s.io/v1beta1"
    assert answer["response"]["uid"] == body["request"]["uid"]


async def test_dry_run_pod_create_from_a_real_cluster(start_server):
    request = fixture("admissionrequest-pod-create-dryrun-kind125.gatekeeper-input-review.json")
    request["object"]["spec"]["nodeName"] = "node1"  # adapted: bind it to the full node
    request["object"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    state = worked_example()
    server = await start_server(state, config())
    status, answer = await server.post("/validate", review(request))
    assert status == 200 and answer["response"]["allowed"] is False
    assert len(state.ledger) == 0


async def test_probes(start_server):
    state = ClusterState()
    server = await start_server(state)
    assert await server.get("/healthz") == (200, "ok")
    assert (await server.get("/readyz"))[0] == 503
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    assert await server.get("/readyz") == (200, "ok")


@pytest.mark.parametrize(
    ("body", "content_type", "status", "fragment"),
    [
        (b"", "application/json", 400, "empty body"),
        (b"{not json", "application/json", 400, "not valid JSON"),
        (b"[]", "application/json", 400, "JSON object"),
        (
            b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v2"}',
            "application/json",
            400,
            "apiVersion",
        ),
        (
            b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}',
            "application/json",
            400,
            "no request",
        ),
        (
            b'{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":5}}',
            "application/json",
            400,
            "uid",
        ),
        (b"{}", "text/plain", 400, "Content-Type"),
        (b"\xff\xfe\x00garbage", "application/json", 400, "not valid JSON"),
    ],
)
async def test_malformed_requests_get_a_json_error(start_server, body, content_type, status, fragment):
    server = await start_server(worked_example(), config())
    got_status, answer = await server.post("/validate", body, headers={"Content-Type": content_type})
    assert got_status == status
    assert fragment in answer["error"]
    # and the server keeps answering good requests
    ok_status, ok = await server.post("/validate", binding("pod5", "node2", dry_run=True))
    assert ok_status == 200 and ok["response"]["allowed"]


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
async def test_json_with_parameters_or_any_case_is_json(start_server, content_type):
    """The raw header is compared first (what the apiserver sends); anything else is parsed."""
    server = await start_server(worked_example(), config())
    body = orjson.dumps(binding("pod5", "node2", dry_run=True))
    status, answer = await server.post("/validate", body, headers={"Content-Type": content_type})
    assert status == 200 and answer["response"]["allowed"]


async def test_unknown_paths_and_other_methods_get_a_json_error_on_every_route(start_server):
    """404 and 405 are JSON errors like every other refusal, on every route the server has."""
    server = await start_server(worked_example(), config())
    routes = {
        "/validate": "POST",
        "/mutate": "POST",
        "/extender/filter": "POST",
        "/extender/prioritize": "POST",
        "/healthz": "GET, HEAD",
        "/readyz": "GET, HEAD",
        "/metrics": "GET, HEAD",
    }
    for path, allow in routes.items():
        method = "GET" if allow == "POST" else "POST"
        async with server.session.request(method, server.url + path, data=b"{}") as response:
            assert response.status == 405, path
            assert response.content_type == "application/json", path
            assert response.headers["Allow"] == allow
            assert orjson.loads(await response.read()) == {
                "error": f"method {method} not allowed: use {allow}",
                "status": 405,
            }
    for method, path in (
        ("GET", "/"),
        ("POST", "/validate/"),
        ("PUT", "/no/such/route"),
        ("GET", "/VALIDATE"),
    ):
        async with server.session.request(method, server.url + path, data=b"{}") as response:
            assert response.status == 404, path
            assert response.content_type == "application/json", path
            assert orjson.loads(await response.read()) == {"error": f"no route for {path}", "status": 404}
    # the routes themselves still answer
    assert (await server.post("/validate", binding("pod5", "node2", dry_run=True)))[0] == 200
    assert await server.get("/healthz") == (200, "ok")


async def test_oversized_bodies_get_413(start_server):
    server = await start_server(worked_example(), config(), max_body_bytes=10_000)
    big = pod_create(pod("big", cpu="1"))
    big["request"]["object"]["metadata"]["annotations"] = {"x": "y" * 20_000}
    status, answer = await server.post("/validate", orjson.dumps(big))
    assert status == 413 and "exceeds" in answer["error"]


async def test_oversized_chunked_bodies_get_413(start_server):
    server = await start_server(worked_example(), config(), max_body_bytes=10_000)

    async def chunks():
        for _ in range(50):
            yield b" " * 1000

    status, _ = await server.post("/validate", chunks())
    assert status == 413


async def test_metrics_count_decisions(start_server):
    server = await start_server(worked_example(), config())
    await server.post("/validate", binding("pod5", "node1"))
    status, text = await server.get("/metrics")
    assert status == 200
    assert (
        'limitguard_admissions_total{action="deny",decision="denied",resource="pods/binding",webhook="validate"} 1.0'
        in text
    )
    assert 'limitguard_state_objects{kind="pods"} 5.0' in text
    assert "limitguard_nodes_over_ratio 0.0" in text
    assert "limitguard_admission_duration_seconds_bucket" in text


def client_for(version: ssl.TLSVersion) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_ciphers("ALL:@SECLEVEL=0")  # let the client offer what it can; the server must refuse
    context.minimum_version = version
    context.maximum_version = version
    return context


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1])
async def test_old_tls_versions_are_refused(start_server, version):
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])
    # OpenSSL either sends a protocol_version alert or drops the connection during the handshake.
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_for(version))
        writer.close()


async def test_tls12_with_modern_ciphers_is_accepted(start_server):
    server = await start_server(worked_example(), config())
    port = int(server.url.rsplit(":", 1)[1])
    context = client_for(ssl.TLSVersion.TLSv1_2)
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    cipher, protocol, _ = writer.get_extra_info("cipher")
    writer.close()
    assert protocol == "TLSv1.2" and cipher.startswith("ECDHE")
