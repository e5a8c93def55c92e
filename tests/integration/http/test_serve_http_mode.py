"""`limitguard serve --http-mode`: the mode asked for, checked against the installed aiohttp at
start-up; the fast mode on an aiohttp it was not tested with serves in the plain mode instead, with a
warning, and answers as before."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import aiohttp
import orjson
import pytest

from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import start_serve
from limitguard.http import fast
from limitguard.http.modes import HTTP_MODES, PLAIN
from limitguard.testing.server import client_context
from tests.support import REPO, binding

DEMO = REPO / "webhook" / "limitguard" / "demo"


def serve_args(tmp_path: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(
        [
            *("--config", str(DEMO / "config.yaml"), "--cluster", str(DEMO / "cluster.yaml")),
            *("--cert-dir", str(tmp_path / "tls")),
            *("--host", "127.0.0.1", "--port", "0", *extra),
        ]
    )


async def denied_binding(port: int, cert_dir: Path) -> bool:
    """The demo's pod5 on node1 (full by limits): the same verdict whichever mode answers it."""
    connector = aiohttp.TCPConnector(ssl=client_context(cert_dir))
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.post(
            f"https://localhost:{port}/validate",
            data=orjson.dumps(binding("pod5", "node1", dry_run=True)),
            headers={"Content-Type": "application/json"},
        ) as answer,
    ):
        assert answer.status == 200
        return (await answer.json())["response"]["allowed"] is False


@pytest.mark.parametrize("name", list(HTTP_MODES))
async def test_serve_serves_in_the_mode_asked_for(tmp_path: Path, caplog, name: str) -> None:
    caplog.set_level(logging.INFO, logger="limitguard.http.modes")
    running = await start_serve(serve_args(tmp_path, "--http-mode", name), {})
    try:
        assert running.services.settings.http_mode is HTTP_MODES[name]
        assert f"HTTP mode: {name}" in [record.getMessage() for record in caplog.records]
        assert await denied_binding(running.port, tmp_path / "tls")
    finally:
        await running.stop()


async def test_the_fast_mode_on_an_untested_aiohttp_serves_plain_with_a_warning(
    tmp_path: Path, caplog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fast, "TESTED_AIOHTTP", ("3.0.0",))  # the installed release is not among them
    caplog.set_level(logging.INFO, logger="limitguard.http.modes")
    running = await start_serve(serve_args(tmp_path), {})  # the default: fast
    try:
        assert running.services.settings.http_mode is PLAIN
        (warning,) = [record for record in caplog.records if record.levelno == logging.WARNING]
        assert f"aiohttp {aiohttp.__version__} is not a release" in warning.getMessage()
        assert await denied_binding(running.port, tmp_path / "tls")
    finally:
        await running.stop()
