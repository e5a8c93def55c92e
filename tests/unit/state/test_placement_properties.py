"""A placement hint's nodes from the node table against a per-node reference, over random clusters.

The reference walks the nodes: eligible as Placement.rejection says, fitting as core.fit.fits
says with the node's sums and ratios; a hostname value counts as fitting only when every eligible
node carrying it fits. Node hostname labels are varied (own name, a value shared with other
nodes, none), and the term must name exactly the values the reference says.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from limitguard.core.eligibility import Placement
from limitguard.core.fit import fits
from limitguard.core.hints import HOSTNAME_LABEL, Operator
from limitguard.core.limitaware import effective_ratios
from limitguard.core.podlimits import PodSpecError, pod_limits
from limitguard.core.podrules import DEFAULT_RULES
from limitguard.state.hostnames import HostnameCodes
from limitguard.state.placement import HintNodes, hint_nodes
from limitguard.state.store import ClusterState
from tests.support import node
from tests.unit.state.random_clusters import (
    CONFIGS,
    NODE_NAMES,
    OPERATIONS,
    PROPERTY_SETTINGS,
    apply,
    node_objects,
    placements,
    pod_objects,
    synced_state,
)


def relabelled(node: dict[str, Any], hostname: str) -> dict[str, Any]:
    labels = node["metadata"]["labels"]
    if hostname == "none":
        del labels[HOSTNAME_LABEL]
    elif hostname == "shared":
        labels[HOSTNAME_LABEL] = "shared"
    return node


HOSTNAME_OPERATIONS = st.tuples(
    st.just("node"), st.builds(relabelled, node_objects(), st.sampled_from(["own", "own", "shared", "none"]))
)


def reference(state: ClusterState, limits: dict[str, int], spec: dict[str, Any], config, max_nodes: int):
    """(fitting eligible nodes, eligible nodes, favoured values, values of eligible nodes without
    room, any eligible node without room lacks the label)."""
    placement = Placement(spec)
    used = [(resource, amount) for resource, amount in limits.items() if amount > 0]
    eligible = [node for node in state.nodes() if placement.rejection(node.traits) is None]
    fitting = {
        node.name
        for node in eligible
        if fits(
            used, node.allocatable, state.allocated(node.name), effective_ratios(node, config.limit_aware)
        )
    }
    unfit_values = {node.traits.labels.get(HOSTNAME_LABEL) for node in eligible if node.name not in fitting}
    values = {
        node.traits.labels[HOSTNAME_LABEL]
        for node in eligible
        if node.name in fitting and HOSTNAME_LABEL in node.traits.labels
    } - unfit_values
    return fitting, eligible, values, unfit_values - {None}, None in unfit_values


@settings(PROPERTY_SETTINGS, max_examples=400)
@given(
    operations=st.lists(st.one_of(OPERATIONS, HOSTNAME_OPERATIONS), min_size=4, max_size=40),
    pod=pod_objects(bound=False),
    placement=st.one_of(st.just({}), placements()),  # every node eligible half the time
    config=CONFIGS,
    max_nodes=st.sampled_from([1, 2, 500]),
)
def test_hint_nodes_on_the_table_equal_the_reference(operations, pod, placement, config, max_nodes):
    state = synced_state()
    state.replace_nodes([node(name) for name in NODE_NAMES])  # then changed at random
    for operation in operations:
        apply(state, operation)
    spec = {**pod["spec"], **placement}
    try:
        limits = dict(pod_limits(spec, pod["status"], DEFAULT_RULES))
    except PodSpecError:
        return
    found = hint_nodes(
        state.node_table(), limits, Placement(spec), config.limit_aware.default_ratios, max_nodes
    )
    if found == "not-exact":
        return  # a quantity past the table's exact range: no hint (the binding check stays exact)
    fitting, eligible, values, unfit_values, unlabelled_unfit = reference(
        state, limits, spec, config, max_nodes
    )
    if not any(amount > 0 for amount in limits.values()):
        assert found == "no-limits"
    elif not eligible:
        assert found == "no-eligible-node"
    elif not fitting:
        assert found == "none-fit"
    elif len(fitting) == len(eligible):
        assert found == "all-fit"
    elif not values:
        assert found == "no-hostname-label"
    else:
        assert isinstance(found, HintNodes)
        assert (found.fit, found.eligible) == (len(fitting), len(eligible))
        if found.operator is Operator.NOT_IN:
            assert not unlabelled_unfit and len(unfit_values) < len(values)
            assert found.values == sorted(unfit_values) and len(unfit_values) <= max_nodes
        elif found.capped:
            assert len(values) > max_nodes and len(found.values) <= max_nodes
            assert set(found.values) <= values
        else:
            assert found.values == sorted(values)


def test_hostname_codes_follow_relabels_and_removals():
    codes = HostnameCodes()
    codes.grow(4)
    codes.set(0, "a")
    codes.set(1, "a")
    codes.set(2, "b")
    assert codes.shared == 1 and codes.values[codes.codes[0]] == "a" == codes.values[codes.codes[1]]
    codes.set(1, None)  # relabelled without the label
    assert codes.shared == 0 and codes.codes[1] == -1
    codes.set(0, None)  # "a" is gone: its code is reused
    free = [i for i, value in enumerate(codes.values) if value == ""]
    codes.set(3, "c")
    assert codes.codes[3] in free and codes.values[codes.codes[3]] == "c"
    codes.set(2, "c")
    assert codes.shared == 1
    codes.grow(8)
    assert list(codes.codes[:4]) == [-1, -1, codes.codes[3], codes.codes[3]] and codes.codes[7] == -1


@pytest.mark.parametrize("removed", [True, False])
def test_the_table_keeps_hostname_codes_as_nodes_change(removed):
    state = synced_state()
    state.replace_nodes([node("n1"), node("n2")])
    renamed = node("n2")
    renamed["metadata"]["labels"][HOSTNAME_LABEL] = "n1"
    state.upsert_node(renamed)
    table = state.node_table()
    assert table.hostnames.shared == 1
    if removed:
        state.remove_node("n1")
    else:
        state.upsert_node(node("n2"))  # its own value again
    table = state.node_table()
    assert table.hostnames.shared == 0
    values = {table.hostnames.values[table.hostnames.codes[row]] for row in table.rows.values()}
    assert values == ({"n1"} if removed else {"n1", "n2"})
