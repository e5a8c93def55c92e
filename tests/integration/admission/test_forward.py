"""Which requests the leader alone decides, and the follower's answers without one."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry

from limitguard.admission.forward import (
    LeaderRouted,
    LedgerRequest,
    decode_decision,
    decode_for_leader,
    encode_decision,
    touches_ledger,
)
from limitguard.admission.review import decode_review
from limitguard.core.config import NoLeaderPolicy
from limitguard.core.response import Response, allowed
from limitguard.kube.replica_metrics import ReplicaMetrics
from tests.support import binding, container, node_write, pod, pod_create, resize


def request(review: dict[str, Any]):
    """As the `/validate` endpoint of a replica decodes it (the ledger's requests keep their bytes)."""
    return decode_for_leader(orjson.dumps(review))


def sized(cpu: str) -> dict[str, Any]:
    return pod("web", node_name="node1", containers=[container(limits={"cpu": cpu})])


@pytest.mark.parametrize(
    ("review", "ledger"),
    [
        (binding("p", "node1"), True),
        (binding("p", "node1", legacy=True), True),
        (binding("p", "node1", dry_run=True), True),  # answered from the leader's view, never recorded
        (pod_create(pod("p", node_name="node1", cpu="1")), True),
        (pod_create(pod("p", cpu="1")), False),  # unbound: checked against every node, nothing held
        (resize(sized("1"), sized("2")), True),
        (resize(sized("2"), sized("1")), False),  # lowering always passes
        (node_write({"metadata": {"name": "n", "annotations": {}}}), False),
    ],
)
def test_touches_ledger(review: dict[str, Any], ledger: bool) -> None:
    assert touches_ledger(request(review)) is ledger


def test_the_leader_gets_the_bytes_the_follower_received() -> None:
    """The forwarded body is the received body, byte for byte, and decodes to the same request."""
    for review in (
        binding("p", "node1", legacy=True),
        resize(sized("1"), sized("2")),
        binding("p", "n", dry_run=True),
        pod_create(pod("p", node_name="node1", cpu="1")),
    ):
        received = orjson.dumps(review, option=orjson.OPT_INDENT_2)  # any spelling the apiserver used
        decoded = decode_for_leader(received)
        assert isinstance(decoded, LedgerRequest) and decoded.body == received
        plain = decode_review(received)
        assert [getattr(decoded, name) for name in plain.__slots__] == [
            getattr(plain, name) for name in plain.__slots__
        ]
    assert not isinstance(request(pod_create(pod("q", cpu="1"))), LedgerRequest)  # answered locally


def deep_binding(levels: int) -> bytes:
    """A binding review whose object carries a value nested *levels* objects deep."""
    review = binding("p", "node1", uid="deep")
    review["request"]["object"]["metadata"]["annotations"] = {"deep": "@"}
    head, tail = orjson.dumps(review).split(b'"@"')
    return head + b'{"a":' * levels + b"1" + b"}" * levels + tail


class Following:
    deciding = False

    def leader_address(self) -> str | None:
        return "leader:8443"


class LeaderOverTheWire:
    """The leader at the other end of a forward: it decodes the forwarded bytes and decides."""

    def __init__(self, decide) -> None:
        self.decide = decide
        self.bodies: list[bytes] = []

    async def forward(self, address: str, request: LedgerRequest) -> Response:
        self.bodies.append(request.body)
        return self.decide(decode_review(request.body))


async def test_a_review_too_deep_to_re_encode_gets_the_leaders_verdict() -> None:
    """A review nested 300 levels: orjson decodes up to 1024 levels but encodes only 254, so a
    follower that re-encoded failed open (allowed) where the leader denied. The bytes go as received."""
    body = deep_binding(300)
    with pytest.raises(TypeError):  # what re-encoding this review would do
        orjson.dumps(orjson.loads(body))

    def leader_decides(review) -> Response:
        return Response(False, "exceeds", 403, f"no room for {review.uid}", (), None, "deny")

    leader = LeaderOverTheWire(leader_decides)
    router = LeaderRouted(
        lambda review: allowed("local"),
        Following(),
        leader,  # type: ignore[arg-type]
        NoLeaderPolicy.LOCAL,
        ReplicaMetrics(CollectorRegistry()),
    )
    answer = await router(router.decode(body))
    assert leader.bodies == [body]
    assert not answer.allowed and answer.message == "no room for deep"


def test_decisions_round_trip() -> None:
    response = Response(False, "exceeds", 403, "no room", ("w",), None, "deny")
    assert decode_decision(encode_decision(response)) == response


class NoLeader:
    deciding = False

    def leader_address(self) -> str | None:
        return None


@pytest.mark.parametrize("policy", list(NoLeaderPolicy))
async def test_without_a_leader_the_policy_answers(policy: NoLeaderPolicy) -> None:
    decided = []

    def local(req):
        decided.append(req.uid)
        return allowed("fits")

    metrics = ReplicaMetrics(CollectorRegistry())
    router = LeaderRouted(local, NoLeader(), None, policy, metrics)  # type: ignore[arg-type]
    answer = await router(request(binding("p", "node1", uid="r1")))
    unbound = await router(request(pod_create(pod("q", cpu="1"), uid="r2")))

    assert unbound.allowed and "r2" in decided  # never forwarded, never a policy matter
    if policy is NoLeaderPolicy.LOCAL:
        assert answer.allowed and decided == ["r1", "r2"]
    elif policy is NoLeaderPolicy.ALLOW:
        assert answer.allowed and answer.warnings == (
            "limitguard: not checked, no deciding leader (election or catch-up under way)",
        )
    else:
        assert not answer.allowed and answer.code == 503
    assert metrics.no_leader_answers.labels(policy.value)._value.get() == 1
