"""An apiserver limitguard cannot use is reported at once, with the URL, the error and what to check.

Each case runs the real live feed (KubeClient, reflectors) against a real failure: a token the fake
apiserver refuses (401), a closed port (connection refused), a list that is never answered (the
client's timeout). The first `list/watch problem, retrying` record of each kind must carry
everything an operator needs to act on it.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
from pathlib import Path

import pytest

from limitguard.kube.client import ApiError
from limitguard.kube.livefeed import start_live_feed
from limitguard.kube.reflector import what_to_check
from limitguard.state.store import ClusterState
from limitguard.testing.clock import FakeClock
from limitguard.testing.fakeapi import FakeApiServer
from tests.integration.kube.helpers import FAST, eventually, write_kubeconfig

PROBLEM = "list/watch problem, retrying"


def problems(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "limitguard.kube.reflector" and r.getMessage() == PROBLEM]


async def first_problem(
    caplog: pytest.LogCaptureFixture, url: str, tmp_path: Path, **settings: float
) -> logging.LogRecord:
    """Start the live feed against *url* and return its first problem record for nodes."""
    feed = await start_live_feed(
        ClusterState(),
        write_kubeconfig(tmp_path, url),
        settings=dataclasses.replace(FAST, **settings),
        clock=FakeClock(autojump=True),
    )
    try:
        await eventually(lambda: any(r.kind == "nodes" for r in problems(caplog)), "a logged problem")
    finally:
        await feed.stop()
    return next(r for r in problems(caplog) if r.kind == "nodes")


async def test_a_refused_token_names_the_url_the_status_and_the_credentials(
    apiserver: FakeApiServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    apiserver.token = "another-token"
    url = await apiserver.start()
    with caplog.at_level(logging.WARNING, logger="limitguard.kube.reflector"):
        record = await first_problem(caplog, url, tmp_path)
    assert record.url == f"{url}/api/v1/nodes"
    assert record.error.startswith("HTTP 401")
    assert record.check.startswith("the credentials")


async def test_a_closed_port_names_the_url_the_connection_error_and_the_address(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"https://127.0.0.1:{port}"
    with caplog.at_level(logging.WARNING, logger="limitguard.kube.reflector"):
        record = await first_problem(caplog, url, tmp_path)
    assert record.url == f"{url}/api/v1/nodes"
    assert record.error.startswith("ClientConnectorError") and str(port) in record.error
    assert record.check.startswith("the server address")


async def test_an_unanswered_list_says_it_timed_out(
    apiserver: FakeApiServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The nodes list is held forever, so the client's own list timeout must end it (its length
    only decides how soon, never whether)."""
    apiserver.gate("nodes")
    url = await apiserver.start()
    with caplog.at_level(logging.WARNING, logger="limitguard.kube.reflector"):
        record = await first_problem(caplog, url, tmp_path, list_timeout_seconds=0.2)
    assert record.url == f"{url}/api/v1/nodes"
    assert record.error == "TimeoutError: no answer in time"
    assert record.check.startswith("that the apiserver is up and reachable")


@pytest.mark.parametrize(
    ("error", "start"),
    [
        (ApiError(403, "Forbidden", 'nodes is forbidden: User "x" cannot list'), "RBAC: this identity needs"),
        (ApiError(404, "Not Found", ""), "the server address: something answers there"),
        (ApiError(500, "Internal Server Error", "etcd"), "the apiserver's health"),
        (None, "the apiserver's logs"),
    ],
)
def test_each_answer_of_the_apiserver_has_its_own_thing_to_check(error: ApiError | None, start: str) -> None:
    assert what_to_check(error, "nodes").startswith(start)
    if error is not None and error.status == 403:
        assert "list nodes" in what_to_check(error, "nodes")
