"""The admission transport tests (test_http.py: TLS versions, body limits, probes; test_forward.py:
a follower asking its leader over TLS) run once per event loop `limitguard serve` may run on; the
policy tests beside them on asyncio's loop only."""

from __future__ import annotations

import pytest

from tests.support import LoopFactories, serving_loops_for


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> LoopFactories:
    return serving_loops_for(item, "test_http.py", "test_forward.py")
