"""SPEC 2's worked example as a ready ClusterState, and the configuration the examples are judged by.

The admission tests, the fuzz tests and bench/fuzz.py all run against this one cluster.
"""

from __future__ import annotations

import math
from typing import Any

from limitguard.core.config import Config, LimitAwareConfig
from limitguard.core.defaults import OPT_IN_LABEL, OPT_IN_VALUE
from limitguard.state.store import ClusterState
from limitguard.testing.builders import namespace, node, pod

# Ledger TTL for states whose verdicts are not about expiry: an approved binding is then held
# until the cache shows the pod, however long the test takes. Expiry itself is tested with an
# injected clock.
LEDGER_NEVER_EXPIRES = math.inf


def config(**limit_aware: Any) -> Config:
    """Limit-aware configuration with the example's 125% cpu ratio, overridden by *limit_aware*."""
    base: dict[str, Any] = {"default_ratios": {"cpu": 125}}
    base.update(limit_aware)
    return Config(limit_aware=LimitAwareConfig(**base))


def worked_example() -> ClusterState:
    """SPEC 2: node1 8 cpu with pods 6 + 4 (full at 125%), node2 with 3 + 2; pod5 (4) pending;
    namespace "default" opted into best-effort defaults."""
    state = ClusterState(ledger_ttl_seconds=LEDGER_NEVER_EXPIRES)
    state.replace_nodes([node("node1"), node("node2")])
    # "default" asked for best-effort defaults (the mutating webhook's opt-in label).
    state.replace_namespaces([namespace("default", labels={OPT_IN_LABEL: OPT_IN_VALUE})])
    state.replace_pods(
        [
            pod("pod1", node_name="node1", cpu="6"),
            pod("pod2", node_name="node1", cpu="4"),
            pod("pod3", node_name="node2", cpu="3"),
            pod("pod4", node_name="node2", cpu="2"),
            pod("pod5", cpu="4", phase="Pending"),
        ]
    )
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state
