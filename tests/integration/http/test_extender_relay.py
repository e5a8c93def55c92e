"""A follower's extender calls are answered from the leader's ledger; without an answer from the
leader, from the follower's own state.

Two replicas wired as `serve` wires them (tests.integration.http.replicapair), real TLS. node1 has
room for two 1-cpu pods; two bindings sent through the follower are held in the leader's ledger
only, so a filter judged on the follower's own state would still offer node1 to a third pod.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from limitguard.certs import generate as certs
from limitguard.http.modes import HttpMode
from tests.integration.http.certificates import certificate_dir, client_context
from tests.integration.http.replicapair import Fixed, Replica, post, replica
from tests.support import binding, pod

THIRD_POD = pod("p2", cpu="1", phase="Pending")


def extender_args(names: list[str]) -> bytes:
    """As a nodeCacheCapable kube-scheduler sends them (Go field names)."""
    return orjson.dumps({"Pod": THIRD_POD, "Nodes": None, "NodeNames": names})


def preemption_args() -> bytes:
    return orjson.dumps({"Pod": THIRD_POD, "NodeNameToVictims": None, "NodeNameToMetaVictims": {}})


def calls(member: Replica, verb: str, outcome: str) -> float:
    labels = {"verb": verb, "outcome": outcome}
    registry = member.services.metrics.registry
    return registry.get_sample_value("limitguard_extender_requests_total", labels) or 0.0


def local_answers(member: Replica, reason: str) -> float:
    registry = member.services.metrics.registry
    return registry.get_sample_value("limitguard_extender_local_answers_total", {"reason": reason}) or 0.0


async def fill_node1_through(member: Replica, cert_dir: Path) -> None:
    for name in ("p0", "p1"):
        body = orjson.dumps(binding(name, "node1", uid=f"bind-{name}"))
        status, review = await post(f"{member.served.url}/validate", client_context(cert_dir), body)
        assert status == 200 and review["response"]["allowed"] is True


async def test_a_followers_extender_calls_are_answered_from_the_leaders_ledger(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    cert_dir = certificate_dir(tmp_path / "tls")
    scheduler = client_context(cert_dir)  # kube-scheduler: verifies the server, presents nothing
    async with replica(cert_dir, http_mode, Fixed(deciding=True)) as leader:
        address = f"127.0.0.1:{leader.served.port}"
        async with replica(cert_dir, http_mode, Fixed(deciding=False, address=address)) as follower:
            await fill_node1_through(follower, cert_dir)
            assert len(leader.state.ledger) == 2 and len(follower.state.ledger) == 0

            answers: dict[str, list[Any]] = {}
            for verb, body in (
                ("filter", extender_args(["node1"])),
                ("prioritize", extender_args(["node1"])),
                ("preempt", preemption_args()),
            ):
                for member in (follower, leader):
                    status, answer = await post(f"{member.served.url}/extender/{verb}", scheduler, body)
                    assert status == 200
                    answers.setdefault(verb, []).append(answer)
                assert answers[verb][0] == answers[verb][1], verb  # the follower relays the leader's
                assert calls(follower, verb, "forwarded") == 1

            relayed_filter = answers["filter"][0]
            assert relayed_filter["nodenames"] == []  # the leader's ledger: node1 is full
            assert list(relayed_filter["failedNodes"]) == ["node1"]
            assert calls(leader, "filter", "checked") == 2  # the relayed call and the direct one
            assert calls(follower, "filter", "checked") == 0  # the follower judged nothing itself


def closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


@pytest.mark.parametrize("leader_is", ["not deciding", "unknown", "unreachable"])
async def test_without_an_answer_from_the_leader_a_follower_answers_from_its_own_state(
    tmp_path: Path, http_mode: HttpMode, leader_is: str
) -> None:
    """Fail open as a single replica answers: the binding check still judges what it proposes."""
    cert_dir = certificate_dir(tmp_path / "tls")
    async with replica(cert_dir, http_mode, Fixed(deciding=False)) as stale_leader:
        address = {
            "not deciding": f"127.0.0.1:{stale_leader.served.port}",
            "unknown": None,
            "unreachable": f"127.0.0.1:{closed_port()}",
        }[leader_is]
        async with replica(cert_dir, http_mode, Fixed(deciding=False, address=address)) as follower:
            status, answer = await post(
                f"{follower.served.url}/extender/filter", client_context(cert_dir), extender_args(["node1"])
            )
            assert status == 200
            assert answer["nodenames"] == ["node1"]  # its own ledger holds nothing: node1 has room
            assert calls(follower, "filter", "checked") == 1
            assert calls(follower, "filter", "forwarded") == 0
            reason = {"not deciding": "not-leader", "unknown": "no-leader", "unreachable": "unreachable"}
            assert local_answers(follower, reason[leader_is]) == 1
            assert (
                calls(stale_leader, "filter", "checked") == 0
            )  # a replica that does not decide never answers


async def test_the_leaders_extender_route_admits_only_the_replicas(
    tmp_path: Path, http_mode: HttpMode
) -> None:
    cert_dir = certificate_dir(tmp_path / "tls")
    replica_pair = (cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY)
    async with replica(cert_dir, http_mode, Fixed(deciding=True)) as leader:
        url = f"{leader.served.url}/leader/extender/filter"
        status, answer = await post(url, client_context(cert_dir), extender_args(["node1"]))
        assert status == 401 and answer["error"].startswith("replica authentication: ")
        status, answer = await post(url, client_context(cert_dir, replica_pair), extender_args(["node1"]))
        assert status == 200 and answer["nodenames"] == ["node1"]
