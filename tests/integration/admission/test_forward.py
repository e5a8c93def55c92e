"""Which requests the leader alone decides, and the follower's answers without one."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from limitguard.admission.forward import (
    LeaderRouted,
    decode_decision,
    encode_decision,
    encode_request,
    touches_ledger,
)
from limitguard.admission.review import decode_review
from limitguard.core.config import NoLeaderPolicy
from limitguard.core.response import Response, allowed
from limitguard.kube.replica_metrics import ReplicaMetrics
from prometheus_client import CollectorRegistry

from tests.support import binding, container, node_write, pod, pod_create, resize


def request(review: dict[str, Any]):
    return decode_review(orjson.dumps(review))


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


def test_the_forwarded_review_decodes_to_the_same_request() -> None:
    for review in (
        binding("p", "node1", legacy=True),
        resize(sized("1"), sized("2")),
        binding("p", "n", dry_run=True),
    ):
        original = request(review)
        assert decode_review(encode_request(original)) == original


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
