"""Property-based bad input against /validate and /mutate (hypothesis).

Every request must get a well-formed answer: 200 with an AdmissionReview that echoes the uid, or
400/413 with a JSON error. Never a 500, never a hang, and a good request is answered right after.
Examples per endpoint: MAX_EXAMPLES mutated reviews and RAW_EXAMPLES raw bodies (figures in docs/benchmarks.md).
Memory under repeated bad input is a figure, not a verdict: bench/fuzz.py prints it next to a baseline.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.testing.examples import config, worked_example
from limitguard.testing.hostile import base_reviews, mutate, paths
from limitguard.testing.threaded import Client, running
from tests.strategies import fuzz_settings, json_values
from tests.support import binding, fixture

MAX_EXAMPLES = 1000  # mutated reviews per endpoint
RAW_EXAMPLES = 400  # raw bodies per endpoint
BODY_LIMIT = 64 * 1024

BASES: list[dict[str, Any]] = base_reviews(fixture)


@st.composite
def mutated_reviews(draw: st.DrawFn) -> bytes:
    document = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths(document)))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "huge", "deep"]))
        if action == "delete" and not path:
            action = "replace"
        document = mutate(document, path, action, draw(json_values))
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:  # nesting beyond orjson's own limit: send it as text
        return ("[" * 3000 + "]" * 3000).encode()


raw_bodies = st.one_of(
    st.binary(max_size=300),
    st.just(b""),
    st.just(
        b'{"apiVersion":"admission.k8s.io/v1","apiVersion":"x","kind":"AdmissionReview","request":{"uid":"a","uid":"b"}}'
    ),
    st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.just(b"\xff\xfe" + orjson.dumps(BASES[0])),
)


@pytest.fixture(scope="module")
def server(cert_dir, http_mode):
    with running(
        cert_dir, worked_example(), config(), max_body_bytes=BODY_LIMIT, http_mode=http_mode
    ) as running_server:
        yield running_server


def assert_well_formed(status: int, raw: bytes, sent: bytes) -> None:
    assert status in (200, 400, 413), (status, raw[:300])
    answer = orjson.loads(raw)
    if status != 200:
        assert isinstance(answer["error"], str) and answer["status"] == status
        return
    request = orjson.loads(sent)["request"]
    assert answer["kind"] == "AdmissionReview"
    assert answer["apiVersion"] == orjson.loads(sent)["apiVersion"]
    assert answer["response"]["uid"] == request["uid"]
    assert isinstance(answer["response"]["allowed"], bool)


def assert_still_serving(client: Client) -> None:
    status, answer = client.post_json("/validate", binding("pod5", "node1", dry_run=True))
    assert status == 200 and answer["response"]["allowed"] is False


@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_mutated_reviews_always_get_a_well_formed_answer(server, path):
    client = Client(server)

    @fuzz_settings(MAX_EXAMPLES)
    @given(body=mutated_reviews())
    def check(body: bytes) -> None:
        status, raw = client.post(path, body)
        assert_well_formed(status, raw, body)

    check()
    assert_still_serving(client)


@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_raw_garbage_and_wrong_content_types(server, path):
    client = Client(server)

    @fuzz_settings(RAW_EXAMPLES)
    @given(
        body=raw_bodies,
        content_type=st.sampled_from(["application/json", "text/plain", None, "application/yaml"]),
    )
    def check(body: bytes, content_type: str | None) -> None:
        status, raw = client.post(path, body, content_type)
        assert status in (200, 400, 413), (status, raw[:200])
        answer = orjson.loads(raw)
        if status == 200:  # only a real review gets here (e.g. the duplicate-key body)
            assert answer["kind"] == "AdmissionReview"
        else:
            assert answer["status"] == status

    check()
    assert_still_serving(client)


def test_bodies_over_the_limit_get_413_and_the_connection_stays_usable(server):
    client = Client(server)
    big = binding("pod5", "node1")
    big["request"]["object"]["metadata"]["annotations"] = {"a": "b" * (BODY_LIMIT + 1)}
    status, raw = client.post("/validate", orjson.dumps(big))
    assert status == 413 and orjson.loads(raw)["status"] == 413
    assert_still_serving(client)
