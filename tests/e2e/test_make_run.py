"""`make run` as a newcomer runs it: the curl hint it prints reaches the server it starts, on the
address HOST= chose (the server listens on that address only, so a hint for localhost would be
refused)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.test_serve_process import free_port
from tests.support import HANG_GUARD_SECONDS, REPO

VENV = Path(sys.prefix)
HINT = re.compile(r"curl -s\S* --cacert (?P<ca>\S+) .* --data @(?P<body>\S+) (?P<url>https://\S+)$")


def run_make(host: str, port: int, certs: Path) -> subprocess.Popen[str]:
    """`make run` with this test's virtualenv taken as built (-o: never reinstalled here)."""
    return subprocess.Popen(
        [
            *("make", "--no-print-directory", "-o", f"{VENV}/bin/limitguard", "run"),
            *(f"HOST={host}", f"PORT={port}", f"CERTS={certs}", f"VENV={VENV}"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # make and the server it starts: one process group to stop
    )


def post(url: str, ca: Path, body: Path) -> dict:
    context = ssl.create_default_context(cafile=str(ca))
    request = urllib.request.Request(
        url, data=body.read_bytes(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, context=context, timeout=HANG_GUARD_SECONDS) as answer:
        return json.loads(answer.read())


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("host", ["127.0.0.2"])
def test_the_printed_curl_reaches_the_server_on_host(tmp_path: Path, host: str) -> None:
    process = run_make(host, free_port(), tmp_path / "certs")
    try:
        assert process.stdout is not None
        hint = None
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        for line in process.stdout:
            hint = hint or HINT.search(line.rstrip())
            if "limitguard serving on" in line:
                break
            assert time.monotonic() < deadline, "hang guard: make run never served"
        assert hint is not None, "make run printed no curl hint"
        assert hint["url"].startswith(f"https://{host}:")  # not localhost: the server listens on HOST
        review = post(hint["url"], REPO / hint["ca"], REPO / hint["body"])
        assert review["response"]["allowed"] is False  # the demo's denied binding, pod5 on node1
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=HANG_GUARD_SECONDS)
