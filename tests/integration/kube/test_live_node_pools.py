"""Node pools on the live feed: a node the watch shows relabelled moves pool at once, while bindings
are being approved over the served webhook, and its gauges follow."""

from __future__ import annotations

from typing import Any

from limitguard.admission.validating import Validator
from limitguard.cli.configfile import parse_config
from limitguard.http.app import Services, create_app
from limitguard.testing.builders import make_namespace, make_pod, node
from tests.integration.kube.test_live_admission import bind

GPU = {"karpenter.sh/nodepool": "gpu"}
SPOT = {"karpenter.sh/capacity-type": "spot"}
CONFIG = parse_config(
    {
        "apiVersion": "limitguard.io/v1alpha1",
        "kind": "LimitGuardConfiguration",
        "limitAware": {
            "defaultLimitToAllocatableRatio": {"cpu": 125},
            "nodePools": [
                {
                    "name": "gpu",
                    "nodeSelector": {"matchLabels": GPU},
                    "limitToAllocatableRatio": {"cpu": 200},
                },
                {
                    "name": "spot",
                    "nodeSelector": {"matchLabels": SPOT},
                    "limitToAllocatableRatio": {"cpu": 100},
                },
            ],
        },
    }
)


def allowed_ratio(live: Any, source: str) -> float | None:
    return live.metrics.registry.get_sample_value(
        "limitguard_node_limit_ratio_allowed", {"node": "node1", "resource": "cpu", "source": source}
    )


async def test_a_relabelled_node_moves_pool_between_bindings(apiserver, connect, aiohttp_client) -> None:
    """node1: 8 cpu, 6 held by pod1. gpu (200%: 16) takes pod5's 4; relabelled spot (100%: 8), the
    same binding is denied naming the pool; back to gpu, allowed again."""
    apiserver.apply("namespaces", make_namespace("default"))
    apiserver.apply("nodes", node("node1", labels=GPU, capacity=True))
    apiserver.apply("pods", make_pod("default", "pod1", "node1", cpu_limit="6"))
    pod5 = make_pod(
        "default", "pod5", "", cpu_limit="4", phase="Pending", uid="00000000-0000-0000-0000-000000000005"
    )
    apiserver.apply("pods", pod5)
    live = await connect(config=CONFIG)
    services = Services(live.state, CONFIG, {"validate": Validator(live.state, CONFIG)}, live.metrics)
    client = await aiohttp_client(create_app(services))

    assert (await bind(client, "node1", "review-1"))["allowed"] is True  # 6 + 4 <= 16
    assert allowed_ratio(live, "pool:gpu") == 2.0
    live.state.ledger.release("default/pod5")

    rv = apiserver.apply("nodes", node("node1", labels=SPOT, capacity=True))
    await live.applied("nodes", rv)
    denied = await bind(client, "node1", "review-2")
    assert denied["allowed"] is False
    assert "(allocated 6 of capacity 8 = 8 allocatable x 100% (pool spot))" in denied["status"]["message"]
    assert (allowed_ratio(live, "pool:spot"), allowed_ratio(live, "pool:gpu")) == (1.0, None)

    rv = apiserver.apply("nodes", node("node1", labels=GPU, capacity=True))
    await live.applied("nodes", rv)
    assert (await bind(client, "node1", "review-3"))["allowed"] is True
    assert allowed_ratio(live, "pool:gpu") == 2.0
