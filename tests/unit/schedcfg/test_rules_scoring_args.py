"""One test per args rule (scoring args: weights, strategies, shapes, ratios, resource names), each with its
valid and its invalid side."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from limitguard.schedcfg import validate_text
from limitguard.schedcfg.tables.releases import Release
from tests.unit.schedcfg.helpers import config, fit_plus, messages, paths, with_args
from tests.unit.schedcfg.helpers import limitguard_view as check

ARGS0 = "profiles[0].pluginConfig[0].args"

DESIGN_DOC_CONFIG: dict[str, Any] = config(
    profiles=[
        {
            "schedulerName": "koord-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFitPlus",
                    "args": {
                        "apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "ResourceTypesArgs",
                        "resources": {
                            "nvidia.com/gpu": {"type": "MostAllocated", "weight": 2},
                            "cpu": {"type": "LeastAllocated", "weight": 1},
                            "memory": {"type": "LeastAllocated", "weight": 1},
                        },
                    },
                },
                {
                    "name": "ScarceResourceAvoidance",
                    "args": {
                        "apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "ScarceResourceAvoidanceArgs",
                        "resources": ["nvidia.com/gpu"],
                    },
                },
            ],
            "plugins": {
                "score": {
                    "enabled": [
                        {"name": "NodeResourcesFitPlus", "weight": 2},
                        {"name": "ScarceResourceAvoidance", "weight": 2},
                    ],
                    "disabled": [{"name": "*"}],
                }
            },
        }
    ]
)


def fit(strategy: dict[str, Any]) -> dict[str, Any]:
    return with_args("NodeResourcesFit", {"scoringStrategy": strategy})


# ------------------------------------------------------------------------------------------ design docs
def test_design_document_config_is_valid() -> None:
    report = check(DESIGN_DOC_CONFIG)
    assert report.ok and not report.warnings, report.format()


def test_design_document_config_with_nodefitplus_kind_is_valid() -> None:
    doc = copy.deepcopy(DESIGN_DOC_CONFIG)
    doc["profiles"][0]["pluginConfig"][0]["args"]["kind"] = "NodeResourcesFitPlusArgs"
    assert check(doc).ok


# ------------------------------------------------------------------------------------------ weights
@pytest.mark.parametrize(("weight", "ok"), [(0, False), (1, True), (100, True), (101, False)])
def test_fit_plus_weight_range(weight: int, ok: bool) -> None:
    report = check(fit_plus({"nvidia.com/gpu": {"type": "MostAllocated", "weight": weight}}))
    assert report.ok is ok
    if not ok:
        assert messages(report) == [
            f'{ARGS0}.resources["nvidia.com/gpu"].weight: Invalid value: {weight}: '
            "not in valid range [1, 100]"
        ]


# Issue 15: kube-scheduler's defaulting turns weight 0 into 1 and starts, so 0 is a warning (it was an error).
@pytest.mark.parametrize(("weight", "ok"), [(0, True), (1, True), (100, True), (101, False), (-1, False)])
def test_node_resources_fit_weight_range(weight: int, ok: bool) -> None:
    report = check(fit({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": weight}]}))
    assert report.ok is ok
    weight_path = f"{ARGS0}.scoringStrategy.resources[0].weight"
    if not ok:
        assert messages(report) == [
            f'{weight_path}: Invalid value: {weight}: resource weight of "cpu" not in valid range (0, 100]'
        ]
        assert "0 becomes 1" not in messages(report)[0] and "into 1" not in messages(report)[0]
    if weight == 0:
        assert [(f.path, f.rule) for f in report.warnings] == [(weight_path, "defaults.zero-replaced")]


def test_node_resources_fit_weight_may_be_omitted() -> None:
    assert check(fit({"type": "LeastAllocated", "resources": [{"name": "cpu"}]})).ok


@pytest.mark.parametrize(("weight", "ok"), [(0, False), (1, True), (100, True), (101, False)])
def test_limit_aware_scoring_weight_range(weight: int, ok: bool) -> None:
    report = check(with_args("LimitAware", {"scoringResourceWeights": {"cpu": weight}}))
    assert report.ok is ok
    assert paths(report) == ([] if ok else [f"{ARGS0}.scoringResourceWeights.cpu"])


# Issue 15: 0 is defaulted to 1 by kube-scheduler (it was rejected here before).
@pytest.mark.parametrize(("weight", "ok"), [(1, True), (2, False), (0, True)])
def test_balanced_allocation_weight_must_be_one(weight: int, ok: bool) -> None:
    report = check(
        with_args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": weight}]})
    )
    assert report.ok is ok
    if not ok:
        assert messages(report) == [f"{ARGS0}.resources[0].weight: Invalid value: {weight}: must be 1"]


def test_balanced_allocation_duplicate_resource() -> None:
    report = check(
        with_args(
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
        )
    )
    assert messages(report) == [f'{ARGS0}.resources[1].name: Duplicate value: "cpu"']


def test_float_weight_is_not_an_integer() -> None:
    report = check(fit_plus({"cpu": {"type": "LeastAllocated", "weight": 1.0}}))
    assert paths(report) == [f"{ARGS0}.resources.cpu.weight"]
    assert "must be of type integer" in report.errors[0].message


# ------------------------------------------------------------------------------------------ strategy types
def test_misspelled_fit_plus_type_has_the_spec_message() -> None:
    report = check(fit_plus({"nvidia.com/gpu": {"type": "MostAlocated", "weight": 2}}))
    assert messages(report) == [
        'profiles[0].pluginConfig[0].args.resources["nvidia.com/gpu"].type: Unsupported value: "MostAlocated": '
        'supported values: "LeastAllocated", "MostAllocated"'
    ]


def test_misspelled_node_resources_fit_type() -> None:
    report = check(fit({"type": "MostAlocated"}))
    assert messages(report) == [
        f'{ARGS0}.scoringStrategy.type: Unsupported value: "MostAlocated": supported '
        'values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    ]


def test_scoring_strategy_type_is_required_when_strategy_given() -> None:
    assert paths(check(fit({"resources": [{"name": "cpu", "weight": 1}]}))) == [
        f"{ARGS0}.scoringStrategy.type"
    ]
    assert check(fit({"type": "LeastAllocated"})).ok


def test_fit_plus_entry_needs_type_and_weight() -> None:
    report = check(fit_plus({"cpu": {}}))
    assert sorted(paths(report)) == [f"{ARGS0}.resources.cpu.type", f"{ARGS0}.resources.cpu.weight"]


# ------------------------------------------------------------------------------------------ shapes
def rtcr(shape: list[dict[str, int]]) -> dict[str, Any]:
    return fit({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}})


def test_shape_strictly_increasing() -> None:
    assert check(rtcr([{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}])).ok
    report = check(
        rtcr(
            [
                {"utilization": 50, "score": 0},
                {"utilization": 50, "score": 10},
                {"utilization": 40, "score": 5},
            ]
        )
    )
    shape = f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape"
    # validateFunctionShape reports the first point out of order only (issue 15: kube-scheduler's verdict)
    assert paths(report) == [f"{shape}[1].utilization"]
    assert "strictly increasing" in report.errors[0].message


def test_shape_ranges() -> None:
    report = check(rtcr([{"utilization": 0, "score": 11}, {"utilization": 101, "score": 0}]))
    shape = f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape"
    assert sorted(paths(report)) == [f"{shape}[0].score", f"{shape}[1].utilization"]


def test_requested_to_capacity_ratio_param_required_and_forbidden() -> None:
    report = check(fit({"type": "RequestedToCapacityRatio"}))
    assert messages(report) == [
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio: Required value: must be "
        "specified when type is RequestedToCapacityRatio"
    ]
    report = check(
        fit(
            {"type": "MostAllocated", "requestedToCapacityRatio": {"shape": [{"utilization": 1, "score": 1}]}}
        )
    )
    assert paths(report) == [f"{ARGS0}.scoringStrategy.requestedToCapacityRatio"]


def test_volume_binding_shape_needs_a_feature_gate_and_must_increase() -> None:
    # With StorageCapacityScoring off (the default through 1.36) kube-scheduler rejects any shape, with one
    # error on shape; on (the default from 1.37) the points are checked.
    args = {"shape": [{"utilization": 10, "score": 1}, {"utilization": 5, "score": 2}]}
    report = validate_text(json.dumps(with_args("VolumeBinding", args)), release=Release(36))
    assert paths(report) == [f"{ARGS0}.shape"]
    assert "StorageCapacityScoring" in report.errors[0].message
    gated = validate_text(
        json.dumps(with_args("VolumeBinding", args)), release=Release(35, {"StorageCapacityScoring": True})
    )
    assert paths(gated) == [f"{ARGS0}.shape[1].utilization"]
    assert paths(check(with_args("VolumeBinding", args))) == [f"{ARGS0}.shape[1].utilization"]
    assert check(with_args("VolumeBinding", {"bindTimeoutSeconds": 0})).ok
    assert not check(with_args("VolumeBinding", {"bindTimeoutSeconds": -1})).ok


# ------------------------------------------------------------------------------------------ ratios
@pytest.mark.parametrize(
    ("ratio", "ok"),
    [
        (150, True),
        ("150%", True),
        ("0%", True),
        (0, True),
        ("150", False),
        (150.0, False),
        (-1, False),
        (True, False),
        ("150 %", False),
    ],
)
def test_limit_aware_ratio_values(ratio: Any, ok: bool) -> None:
    report = check(with_args("LimitAware", {"defaultLimitToAllocatableRatio": {"cpu": ratio}}))
    assert report.ok is ok
    if not ok:
        assert paths(report) == [f"{ARGS0}.defaultLimitToAllocatableRatio.cpu"]
        assert 'percent string ("150%")' in report.errors[0].message


def test_limit_aware_unknown_field_is_rejected() -> None:
    report = check(with_args("LimitAware", {"resources": [{"name": "cpu", "weight": 1}]}))
    assert paths(report) == [f"{ARGS0}.resources"]


# ------------------------------------------------------------------------------------------ resource names
@pytest.mark.parametrize(
    ("args", "bad_path"),
    [
        (
            {
                "kind": "NodeResourcesFitPlusArgs",
                "resources": {"gpu": {"type": "MostAllocated", "weight": 1}},
            },
            f"{ARGS0}.resources.gpu",
        ),
        (
            {
                "kind": "NodeResourcesFitPlusArgs",
                "resources": {"Nvidia.com/gpu": {"type": "MostAllocated", "weight": 1}},
            },
            f'{ARGS0}.resources["Nvidia.com/gpu"]',
        ),
    ],
)
def test_fit_plus_resource_names(args: dict[str, Any], bad_path: str) -> None:
    assert paths(check(with_args("NodeResourcesFitPlus", args))) == [bad_path]


def test_scarce_resource_names() -> None:
    assert check(with_args("ScarceResourceAvoidance", {"resources": ["nvidia.com/gpu", "hugepages-2Mi"]})).ok
    report = check(with_args("ScarceResourceAvoidance", {"resources": ["nvidia.com/gpu", "gpu"]}))
    assert paths(report) == [f"{ARGS0}.resources[1]"]


def test_limit_aware_resource_name_keys() -> None:
    report = check(with_args("LimitAware", {"defaultLimitToAllocatableRatio": {"nvidia com/gpu": 100}}))
    assert paths(report) == [f'{ARGS0}.defaultLimitToAllocatableRatio["nvidia com/gpu"]']


def test_ignored_resource_groups_cannot_contain_slash() -> None:
    assert check(with_args("NodeResourcesFit", {"ignoredResourceGroups": ["example.com"]})).ok
    report = check(with_args("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/foo"]}))
    assert messages(report) == [
        f'{ARGS0}.ignoredResourceGroups[0]: Invalid value: "example.com/foo": '
        "resource group name can't contain '/'"
    ]
