"""The tests of this folder really run once per serving event loop: a guard on the conftest hook."""

from __future__ import annotations

import asyncio

import pytest


async def test_this_test_runs_on_the_loop_its_id_names(request: pytest.FixtureRequest) -> None:
    loop_name = request.node.callspec.id
    assert loop_name in ("uvloop", "asyncio")
    loop = asyncio.get_running_loop()
    assert type(loop).__module__.split(".")[0] == loop_name
