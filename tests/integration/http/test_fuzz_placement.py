"""Property-based hostile pods at /mutate-placement, /mutate-scheduler and /mutate over real TLS
(hypothesis): whatever JSON stands where the hint or the scheduler change reads or patches, the
answer is 200, allowed, not the fail-open answer to an internal error, and its patch applies to
the pod sent. The cluster has nodes with and without room, so a well-formed pod gets a hint."""

from __future__ import annotations

import base64

import jsonpatch
import orjson
import pytest
from hypothesis import given

from limitguard.testing.threaded import Client, running
from tests.strategies import DEEP_PLACES, create_review, deep_pod_create, fuzz_settings, hostile_pods
from tests.unit.admission.hint_cluster import limited, with_scheduler_namespace

EXAMPLES = 300  # hostile pods per route
ROUTES = ("/mutate-placement", "/mutate-scheduler", "/mutate")
HINTED, MOVED = limited("web-1"), limited("web-2", namespace_name="sched")


@pytest.fixture(scope="module")
def server(cert_dir, http_mode):
    state, config = with_scheduler_namespace()
    with running(cert_dir, state, config, http_mode=http_mode) as running_server:
        yield running_server


def assert_allowed_and_applies(client: Client, route: str, body: bytes) -> dict:
    status, raw = client.post(route, body)
    assert status == 200, (status, raw[:300])
    response = orjson.loads(raw)["response"]
    assert response["allowed"] is True
    assert not any("internal error" in text for text in response.get("warnings", ()))
    if "patch" in response:
        operations = orjson.loads(base64.b64decode(response["patch"]))
        jsonpatch.apply_patch(orjson.loads(body)["request"]["object"], operations, in_place=True)
    return response


def internal_errors(server, route: str) -> float:
    value = server.services.metrics.registry.get_sample_value(
        "limitguard_fail_open_answers_total", {"webhook": route.strip("/"), "reason": "internal-error"}
    )
    return value or 0.0


@pytest.mark.parametrize("route", ROUTES)
def test_hostile_pods_are_allowed_and_never_an_internal_error(server, route):
    client = Client(server)
    # The starting pods do get a hint (default) and the scheduler (sched); /mutate-scheduler trusts
    # its webhook entry's namespaceSelector, so it moves the pod of "default" too.
    hinted = assert_allowed_and_applies(client, route, create_review(HINTED, "default"))
    moved = assert_allowed_and_applies(client, route, create_review(MOVED, "sched"))
    assert "patch" in hinted
    assert "patch" in moved

    @fuzz_settings(EXAMPLES)
    @given(hinted=hostile_pods(HINTED), moved=hostile_pods(MOVED))
    def check(hinted: dict, moved: dict) -> None:
        assert_allowed_and_applies(client, route, create_review(hinted, "default"))
        assert_allowed_and_applies(client, route, create_review(moved, "sched"))

    check()
    for place in DEEP_PLACES:  # nesting as deep as the server decodes (orjson: 1,024 levels)
        assert_allowed_and_applies(client, route, deep_pod_create(HINTED, place, 1010))
    assert internal_errors(server, route) == 0
