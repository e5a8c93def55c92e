"""What the benchmark scripts share: server subprocesses started and waited for, and their figures.

Run every script from the repository root as a module (`python -m bench.<name>`), so `bench` and the
installed `limitguard` import without path tricks.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

import aiohttp

REPO = Path(__file__).resolve().parents[1]


def serve_command(*options: str, port: int) -> list[str]:
    """`limitguard serve OPTIONS` on 127.0.0.1:*port*, logging warnings only."""
    return [
        *(sys.executable, "-m", "limitguard", "serve", *options),
        *("--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"),
    ]


def free_ports(count: int) -> list[int]:
    """*count* different ports nothing listens on now: benchmarks of several checkouts may run on one
    machine at once, and a fixed port could answer the readiness check from another's server."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def free_port() -> int:
    return free_ports(1)[0]


def start(
    command: list[str],
    ready_url: str,
    context: ssl.SSLContext,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
    log_file: IO[bytes] | None = None,
) -> subprocess.Popen:
    """Start *command* and return once *ready_url* answers 200.

    Its stderr is kept for the error message, or written to *log_file* when the server logs at info
    for the whole run (a pipe nobody reads would fill and block it).
    """
    stderr = log_file if log_file is not None else subprocess.PIPE
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, cwd=REPO, env=env)

    async def wait_ready() -> None:
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session:
            while time.monotonic() < deadline:
                if process.poll() is not None:
                    output = process.stderr.read().decode()[-2000:] if process.stderr else "see its log file"
                    raise RuntimeError(f"{command[0]} exited: {output}")
                try:
                    async with session.get(ready_url) as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
        raise RuntimeError(f"{command} not ready after {timeout}s")

    asyncio.run(wait_ready())
    return process


def start_floor(
    cert_dir: Path,
    port: int,
    context: ssl.SSLContext,
    event_loop: str = "asyncio",
    client_ca_file: str = "",
    prioritize_answer_for: Path | None = None,
) -> subprocess.Popen:
    """The floor (bench/floor_server.py) on *port*, with the certificates in *cert_dir*, on
    *event_loop* (asyncio's own: the issue's floor), asking clients for a certificate from
    *client_ca_file* when given, sending the answer to *prioritize_answer_for*'s candidates
    pre-built on /extender-prebuilt/prioritize when given."""
    command = [
        *(sys.executable, "-m", "bench.floor_server", "--cert-dir", str(cert_dir), "--port", str(port)),
        *("--event-loop", event_loop),
        *(("--client-ca-file", client_ca_file) if client_ca_file else ()),
        *(("--prioritize-answer-for", str(prioritize_answer_for)) if prioritize_answer_for else ()),
    ]
    return start(command, f"https://localhost:{port}/readyz", context)


def stop(*processes: subprocess.Popen | None) -> None:
    """Terminate each process that was started, then wait for it, in order."""
    for process in processes:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)


def start_fake_apiserver(nodes: int, pods: int, token: str) -> tuple[subprocess.Popen[str], str]:
    """The fake apiserver holding a synthetic cluster, in its own process (so figures printed here
    are limitguard's alone); returns the process and its base URL (plain HTTP, loopback)."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "limitguard.testing.fakeapiserver"),
            *("--nodes", str(nodes), "--pods", str(pods), "--token", token, "--bookmark-interval", "5"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}"


def peak_rss_mb(pid: int) -> float:
    """VmHWM of process *pid* in MB (nan when /proc does not say)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile_ms(latencies: list[float], fraction: float) -> float:
    """The *fraction* percentile of latencies in seconds, in milliseconds (nearest rank)."""
    if not latencies:
        return float("nan")
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000
