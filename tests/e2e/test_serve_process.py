"""`limitguard serve` as a process: start-up errors, and a graceful SIGTERM that finishes in-flight work."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
import time

import aiohttp
import orjson
import pytest

from limitguard.testing.server import client_context
from tests.support import HANG_GUARD_SECONDS, REPO, SERVING_LOOPS

DEMO = REPO / "webhook" / "limitguard" / "demo"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_ready(url: str, process: subprocess.Popen, cert_dir) -> None:
    """Poll until /readyz answers 200; the deadline is a hang guard, not a start-up time limit."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not (cert_dir / "ca.crt").exists():  # the server generates its certificates at start
        assert process.poll() is None, "server exited before writing its CA"
        assert time.monotonic() < deadline, "hang guard: the server never wrote its CA"
        await asyncio.sleep(0.05)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_context(cert_dir))) as session:
        while time.monotonic() < deadline:
            assert process.poll() is None, "server exited"
            try:
                async with session.get(url + "/readyz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError("hang guard: the server never became ready")


@pytest.mark.parametrize("event_loop", SERVING_LOOPS)
async def test_sigterm_under_load_answers_what_it_accepted_then_exits_0(tmp_path, event_loop):
    """Clients keep sending when SIGTERM arrives: every request the server took gets a complete,
    well-formed answer; then the connections close, new ones are refused, and the exit code is 0.
    (A body still arriving at that moment is not waited for beyond the 10 s body timeout.)
    On each event loop `serve --event-loop` offers here, which its start-up log line names."""
    cert_dir = tmp_path / "certs"
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "limitguard",
            "serve",
            "--config",
            str(DEMO / "config.yaml"),
            "--cluster",
            str(DEMO / "cluster.yaml"),
            "--cert-dir",
            str(cert_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--event-loop",
            event_loop,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "serve.log").open("w"),  # a pipe nobody reads would fill and stall the server
    )
    url = f"https://localhost:{port}"
    answered: list[bool] = []
    stopped_by: list[str] = []
    try:
        await wait_ready(url, process, cert_dir)
        body = (DEMO / "binding-pod5-node1.json").read_bytes()

        async def client() -> None:
            connector = aiohttp.TCPConnector(ssl=client_context(cert_dir), limit=1)
            async with aiohttp.ClientSession(connector=connector) as session:
                while True:
                    try:
                        async with session.post(
                            url + "/validate", data=body, headers={"Content-Type": "application/json"}
                        ) as response:
                            assert response.status == 200
                            answer = orjson.loads(await response.read())  # a cut body would raise here
                            answered.append(answer["response"]["allowed"] is False)
                    except (
                        aiohttp.ClientConnectorError,
                        aiohttp.ServerDisconnectedError,
                        aiohttp.ClientOSError,
                    ) as error:
                        stopped_by.append(type(error).__name__)
                        return

        clients = [asyncio.create_task(client()) for _ in range(8)]
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while len(answered) < 200:  # the load is flowing: SIGTERM arrives mid-stream
            assert time.monotonic() < deadline and not any(c.done() for c in clients), "hang guard: no load"
            await asyncio.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(asyncio.gather(*clients), HANG_GUARD_SECONDS)
        assert await asyncio.to_thread(process.wait, HANG_GUARD_SECONDS) == 0
        assert all(answered) and len(stopped_by) == 8
        with contextlib.suppress(OSError):
            _, late = await asyncio.open_connection("127.0.0.1", port)
            late.close()
            raise AssertionError("still accepting connections after SIGTERM")
        logged = [orjson.loads(line) for line in (tmp_path / "serve.log").read_text().splitlines()]
        assert [line["eventLoop"] for line in logged if "eventLoop" in line] == [event_loop]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def serve_once(tmp_path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`limitguard serve` with arguments that must make it stop at start-up."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "limitguard",
            "serve",
            *arguments,
            "--cert-dir",
            str(tmp_path / "certs"),
            "--port",
            str(free_port()),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )


def test_bad_configuration_exits_2_with_the_field_path(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\nlimitAware: {enforcement: Block}\n"
    )
    completed = serve_once(tmp_path, "--config", str(config), "--cluster", str(DEMO / "cluster.yaml"))
    assert completed.returncode == 2
    assert "limitAware.enforcement" in completed.stderr


def test_bad_node_pools_exit_2_with_one_line_per_problem(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\nlimitAware:\n  nodePools:\n"
        "  - {name: gpu, nodeSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]},"
        " limitToAllocatableRatio: {cpu: 200}}\n"
        "  - {name: gpu, nodeSelector: {}, limitToAllocatableRatio: {cpu: 100}}\n"
    )
    completed = serve_once(tmp_path, "--config", str(config), "--cluster", str(DEMO / "cluster.yaml"))
    assert completed.returncode == 2
    lines = completed.stderr.splitlines()
    after = lines[lines.index("limitguard: invalid configuration:") + 1 :]
    assert [line.strip().split(":")[0] for line in after] == [
        "limitAware.nodePools[0].nodeSelector.matchExpressions[0].values",
        "limitAware.nodePools[1].name",
    ]


def test_unreadable_cluster_file_exits_2(tmp_path):
    completed = serve_once(tmp_path, "--cluster", str(tmp_path / "nope.yaml"))
    assert completed.returncode == 2 and "cannot read" in completed.stderr


def test_demanding_uvloop_where_it_is_missing_exits_2(tmp_path):
    """`--event-loop uvloop` without uvloop installed stops at start-up, before any certificate or
    cluster work, and says how to fix it (`auto`, the default, would fall back to asyncio)."""
    hide_uvloop = (
        "import sys; sys.modules['uvloop'] = None; from limitguard.cli.main import main; sys.exit(main())"
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            hide_uvloop,
            "serve",
            "--event-loop",
            "uvloop",
            "--cert-dir",
            str(tmp_path / "c"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )
    assert completed.returncode == 2
    assert "uvloop is not installed (pip install uvloop)" in completed.stderr
    assert not (tmp_path / "c").exists()
