"""limitAware.nodePools: every configuration error with its field path, and LabelSelector matching
as client-go matches (k8s.io/apimachinery pkg/labels/selector.go Requirement.Matches)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from limitguard.cli.configfile import parse_config
from limitguard.cli.main import main
from limitguard.core.config import ConfigError
from limitguard.core.labelselector import parse_label_selector
from limitguard.core.pools import MAX_NODE_POOLS, PoolChooser, parse_node_pools, pool_of
from limitguard.core.ratios import MAX_RATIO_RESOURCES
from tests.support import REPO

POOL = "limitAware.nodePools[0]"
SELECTOR = f"{POOL}.nodeSelector"


def pool(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "gpu", "nodeSelector": {}, "limitToAllocatableRatio": {"cpu": 200}}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not ...}


def problems(*pools: dict[str, Any]) -> list[str]:
    raw = {
        "apiVersion": "limitguard.io/v1alpha1",
        "kind": "LimitGuardConfiguration",
        "limitAware": {"nodePools": list(pools)},
    }
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    return error.value.problems


def expression(**fields: Any) -> dict[str, Any]:
    return {"nodeSelector": {"matchExpressions": [fields]}}


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (
            expression(key="a", operator="Gt", values=["1"]),
            f'{SELECTOR}.matchExpressions[0].operator: Unsupported value: "Gt": supported values: '
            '"In", "NotIn", "Exists", "DoesNotExist"',
        ),
        (
            expression(key="a", operator="Exists", values=["x"]),
            f"{SELECTOR}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists'",
        ),
        (
            expression(key="a", operator="DoesNotExist", values=["x"]),
            f"{SELECTOR}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
            "'DoesNotExist'",
        ),
        (
            expression(key="a", operator="In", values=[]),
            f"{SELECTOR}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In'",
        ),
        (
            expression(key="-a", operator="Exists"),
            f"{SELECTOR}.matchExpressions[0].key: Invalid value: '-a': must be a qualified name",
        ),
        (
            expression(key="a", operator="NotIn", values=["ok", "x" * 64]),
            f"{SELECTOR}.matchExpressions[0].values[1]: Invalid value: ",
        ),
        (
            {"nodeSelector": {"matchLabels": {"a/b/c": "x"}}},
            f"{SELECTOR}.matchLabels: Invalid value: 'a/b/c'",
        ),
        (
            {"nodeSelector": {"matchLabels": {"a": "bad value"}}},
            f"{SELECTOR}.matchLabels.a: Invalid value: 'bad value'",
        ),
        ({"nodeSelector": ...}, f"{SELECTOR}: Required value"),
        ({"name": "GPU"}, f"{POOL}.name: "),
        (
            {"limitToAllocatableRatio": {"cpu": "200"}},
            f'{POOL}.limitToAllocatableRatio.cpu: invalid ratio "200": a string needs a % sign',
        ),
        (
            {"limitToAllocatableRatio": {"cpu": 1.5}},
            f"{POOL}.limitToAllocatableRatio.cpu: invalid ratio 1.5: must be a whole percent",
        ),
        (
            {"limitToAllocatableRatio": {f"example.com/r{i}": 100 for i in range(MAX_RATIO_RESOURCES + 1)}},
            f"{POOL}.limitToAllocatableRatio: names {MAX_RATIO_RESOURCES + 1} resources; at most "
            f"{MAX_RATIO_RESOURCES} are allowed",
        ),
    ],
)
def test_each_configuration_error_names_its_path(fields: dict[str, Any], problem: str) -> None:
    found = problems(pool(**fields))
    assert len(found) == 1 and found[0].startswith(problem), found


def test_a_duplicate_name_and_too_many_pools() -> None:
    assert problems(pool(), pool(nodeSelector={"matchLabels": {"a": "b"}})) == [
        "limitAware.nodePools[1].name: Duplicate value: 'gpu' (also limitAware.nodePools[0])"
    ]
    many = [pool(name=f"p{i}") for i in range(MAX_NODE_POOLS + 1)]
    assert problems(*many) == [
        f"limitAware.nodePools: Too many: {MAX_NODE_POOLS + 1}: must have at most 64 items"
    ]


def test_every_problem_of_a_pool_is_reported_at_once() -> None:
    _, found = parse_node_pools(
        [
            pool(
                nodeSelector={
                    "matchLabels": {"a": "-x"},
                    "matchExpressions": [{"key": "b", "operator": "Exists", "values": ["y"]}],
                }
            )
        ]
    )
    assert [line.split(":")[0] for line in found] == [
        f"{SELECTOR}.matchLabels.a",
        f"{SELECTOR}.matchExpressions[0].values",
    ]


def test_the_command_prints_one_line_per_problem_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\nlimitAware:\n  nodePools:\n"
        "  - {name: gpu, nodeSelector: {matchLabels: {a: '-x'}}, limitToAllocatableRatio: {cpu: 200}}\n"
        "  - {name: gpu, nodeSelector: {}, limitToAllocatableRatio: {cpu: 100}}\n"
    )
    cluster = REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml"
    expected = [f"{SELECTOR}.matchLabels.a", "limitAware.nodePools[1].name"]
    assert main(["audit", "--cluster", str(cluster), "--config", str(config)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.strip().split(":")[0] for line in lines[1:]] == expected


# -- matching ------------------------------------------------------------------------------------
def selector(raw: dict[str, Any]) -> Any:
    compiled, found = parse_label_selector(raw, "s")
    assert found == []
    return compiled


@pytest.mark.parametrize(
    ("raw", "labels", "matches"),
    [
        ({}, {}, True),  # {} selects everything
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),  # absent key
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
        (
            {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "Exists"}]},
            {"a": "1"},
            False,
        ),
        ({"matchLabels": {"a": ""}}, {"a": ""}, True),  # an empty value is a valid label value
    ],
)
def test_selectors_match_as_client_go_does(
    raw: dict[str, Any], labels: dict[str, str], matches: bool
) -> None:
    assert selector(raw).matches(labels) is matches


def test_the_first_matching_pool_wins() -> None:
    pools, found = parse_node_pools(
        [
            pool(name="gpu", nodeSelector={"matchLabels": {"pool": "gpu"}}),
            pool(name="rest", nodeSelector={}),
        ]
    )
    assert found == []
    assert [pool_of(labels, pools).name for labels in ({"pool": "gpu"}, {"pool": "cpu"}, {})] == [
        "gpu",
        "rest",
        "rest",
    ]


def test_the_remembered_choice_is_the_scan_s_choice() -> None:
    """PoolChooser answers what pool_of answers for every combination of the selected keys' values,
    a key's absence included, and forgets everything when its memo is full."""
    pools, _ = parse_node_pools(
        [
            pool(
                name="a",
                nodeSelector={"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["1"]}]},
            ),
            pool(name="b", nodeSelector={"matchLabels": {"y": "2"}}),
            pool(name="c", nodeSelector={"matchExpressions": [{"key": "y", "operator": "DoesNotExist"}]}),
        ]
    )
    chooser = PoolChooser(pools)
    chooser._memo.max_entries = 4
    cases = [{}, {"x": "1"}, {"x": "1", "y": "2"}, {"x": "1", "y": "3"}, {"x": "2"}, {"x": "1", "z": "9"}]
    for labels in cases * 2:
        found, expected = chooser(labels), pool_of(labels, pools)
        assert (found.name if found else None) == (expected.name if expected else None), labels
    assert len(chooser._memo) <= 4
    assert [getattr(chooser(labels), "name", None) for labels in cases] == ["a", "c", "b", None, "a", "c"]
