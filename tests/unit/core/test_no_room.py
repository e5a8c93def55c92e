"""The "no room" verdict remembers its example sentence; the sentence still follows every input."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from limitguard.core.config import LimitAwareConfig, UnboundPolicy
from limitguard.core.eligibility import NodeTraits
from limitguard.core.fit import describe_node, shortfalls
from limitguard.core.limitaware import effective_ratios, no_room
from limitguard.core.pools import DEFAULT, RatioSource

CONFIG = LimitAwareConfig(default_ratios={"cpu": 150, "memory": 100}, unbound_pods=UnboundPolicy.DENY)


@dataclass
class Node:
    traits: NodeTraits
    allocatable: Mapping[str, int]
    ratio_override: Mapping[str, int] | None = None
    ratio_problem: str | None = None
    ratio_source: RatioSource = DEFAULT


def sentence(pod: Mapping[str, int], node: Node, allocated: Mapping[str, int]) -> str:
    """What no_room says of its example, computed afresh."""
    ratios = effective_ratios(node, CONFIG)
    source = node.ratio_source.describe()
    return describe_node(
        node.traits.name, shortfalls(pod, node.allocatable, allocated, ratios, ratio_source=source)
    )


def test_the_example_sentence_follows_the_node_its_sums_its_ratios_and_the_pod() -> None:
    small = Node(NodeTraits("n0", {}), {"cpu": 2000, "memory": 4 << 30})
    bigger = Node(NodeTraits("n0", {}), {"cpu": 4000, "memory": 4 << 30})
    override = Node(NodeTraits("n0", {}), {"cpu": 2000, "memory": 4 << 30}, ratio_override={"cpu": 200})
    other = Node(NodeTraits("n1", {}), {"cpu": 2000, "memory": 4 << 30})
    cases = [
        ({"cpu": 4000}, small, {"cpu": 1000}),
        ({"cpu": 4000}, small, {"cpu": 2500}),  # the same node after a pod landed on it
        ({"cpu": 4000, "memory": 8 << 30}, small, {"cpu": 2500}),
        ({"memory": 8 << 30, "cpu": 4000}, small, {"cpu": 2500}),  # rows follow the pod's order
        ({"cpu": 7000}, bigger, {"cpu": 2500}),
        ({"cpu": 4000}, override, {"cpu": 2500}),
        ({"cpu": 4000}, other, {"cpu": 2500}),
    ]
    for _ in range(2):  # asked again: remembered, and still each its own
        for pod, node, allocated in cases:
            verdict = no_room("pod p", pod, 3, node, lambda name, allocated=allocated: allocated, CONFIG)
            assert not verdict.allowed
            assert verdict.message.endswith(f"for example {sentence(pod, node, allocated)}")
    first, landed = (
        no_room("pod p", {"cpu": 4000}, 3, small, lambda _, sums=sums: sums, CONFIG).message
        for sums in ({"cpu": 1000}, {"cpu": 2500})
    )
    assert (
        "exceeds remaining 2 (allocated 1 of" in first and "exceeds remaining 500m (allocated 2500m" in landed
    )


def test_the_remembered_texts_follow_the_eligible_count_and_the_pod_name() -> None:
    node = Node(NodeTraits("n0", {}), {"cpu": 2000}, ratio_source=RatioSource("pool:gpu"))
    warn = LimitAwareConfig(default_ratios={"cpu": 150}, unbound_pods=UnboundPolicy.WARN)
    answers = [
        no_room(f"pod {name}", {"cpu": 4000}, eligible, node, lambda _: {"cpu": 1000}, warn)
        for name, eligible in (("a", 1), ("b", 3), ("c", 1))
    ]
    shortfall = sentence({"cpu": 4000}, node, {"cpu": 1000})
    assert "pool gpu" in shortfall
    assert [(answer.message, answer.warnings) for answer in answers] == [
        (
            f"pod {name} fits no eligible node's limit-to-allocatable ratio ({checked}); for example {shortfall}",
            (f"limitguard: none of {eligible} eligible nodes has room for the pod's limits",),
        )
        for name, eligible, checked in (
            ("a", 1, "1 eligible node checked"),
            ("b", 3, "3 eligible nodes checked"),
            ("c", 1, "1 eligible node checked"),
        )
    ]
