"""The transport's tests run once per event loop `limitguard serve` may run on."""

from __future__ import annotations

import pytest

from tests.support import SERVING_LOOPS, LoopFactories


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> LoopFactories:
    return SERVING_LOOPS
