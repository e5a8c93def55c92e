"""The connection bounds cross the event loop: their tests run on every loop `limitguard serve` may use."""

from __future__ import annotations

import pytest

from tests.support import LoopFactories, serving_loops_for


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> LoopFactories:
    return serving_loops_for(item, "test_limits.py")
