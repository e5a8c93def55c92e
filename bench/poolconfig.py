"""Node pools for the benches: the same pools, parsed as limitguard parses its configuration.

Only limitguard's core at module level, so `bench.state_load`'s fresh processes can import it without
counting the benches' own imports in their memory.
"""

from __future__ import annotations

from typing import Any

from limitguard.core.pools import parse_node_pools

POOL_LABEL = "karpenter.sh/nodepool"


def node_pools(count: int) -> tuple[Any, ...]:
    """*count* pools over the bench nodes' pool label, parsed as limitguard parses its configuration."""
    raw = []
    for index in range(count):
        name = f"p{index}"
        selector: dict[str, Any] = (
            {"matchLabels": {POOL_LABEL: name}}
            if index % 2 == 0
            else {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [name]}]}
        )
        raw.append({"name": name, "nodeSelector": selector, "limitToAllocatableRatio": {"cpu": 100 + index}})
    pools, problems = parse_node_pools(raw)
    assert not problems, problems
    return pools
