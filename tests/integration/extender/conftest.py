"""limitguard's real app (extender routes included) over TLS on 127.0.0.1: the shared server fixture."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from limitguard.core.config import Config
from limitguard.state.store import ClusterState
from tests.conftest import RunningServer


@pytest.fixture
def start_extender(start_server: Callable[..., Any]) -> Callable[..., Any]:
    async def start(
        state: ClusterState, config: Config | None = None, max_body_bytes: int | None = None
    ) -> RunningServer:
        settings = {} if max_body_bytes is None else {"extender_max_body_bytes": max_body_bytes}
        return await start_server(state, config, **settings)

    return start
