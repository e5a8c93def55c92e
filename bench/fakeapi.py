"""The fake API server (tests/fakeapiserver.py) as a benchmark subprocess holding a synthetic cluster."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def start_fake_apiserver(nodes: int, pods: int, token: str) -> tuple[subprocess.Popen[str], str]:
    """Start it and wait for its port; returns the process and its base URL (plain HTTP, loopback)."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "limitguard.testing.fakeapiserver",
            "--nodes",
            str(nodes),
            "--pods",
            str(pods),
            "--token",
            token,
            "--bookmark-interval",
            "5",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}"
