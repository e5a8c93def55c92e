"""scheduler-plugins' own validation tables, translated: the verdict of limitguard's checks of each args kind
equals the plugin's (errors where the plugin's constructor refuses the args, so the scheduler does not
start), each under the build whose table it is: v0.34.7's under scheduler-plugins@v0.34.7 and @main
(master keeps every v0.34.7 case and adds its own, in test_sigs_unreleased.py), v0.33.5's under
@v0.33.5."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.schedcfg.sigs_helpers import errors, run

# kubernetes-sigs/scheduler-plugins apis/config/validation/validation_plugingargs_test.go @ v0.34.7,
# TestValidateNodeResourceTopologyMatchArgs (the test gives internal args, i.e. after defaulting).
NRT_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("correct config", {"scoringStrategy": {"type": "MostAllocated"}}, []),
    (
        "incorrect config, wrong ScoringStrategy type",
        {"scoringStrategy": {"type": "not existent"}},
        ['args.scoringStrategy.type: Invalid value: "not existent": invalid ScoringStrategyType'],
    ),
]

# Same file, TestValidateCoschedulingArgs.
COSCHEDULING_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "correct config with valid values",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 60, "podGroupRejectPercentage": 10},
        [],
    ),
    (
        "valid PodGroupRejectPercentage at boundaries",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 0},
        [],
    ),
    (
        "valid PodGroupRejectPercentage at upper boundary",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 100},
        [],
    ),
    (
        "invalid PermitWaitingTimeSeconds (negative value)",
        {"permitWaitingTimeSeconds": -10, "podGroupBackoffSeconds": 60, "podGroupRejectPercentage": 10},
        ["args.permitWaitingTimeSeconds: Invalid value: -10: must be greater than or equal to 0"],
    ),
    (
        "invalid PodGroupBackoffSeconds (negative value)",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": -20, "podGroupRejectPercentage": 10},
        ["args.podGroupBackoffSeconds: Invalid value: -20: must be greater than or equal to 0"],
    ),
    (
        "invalid PodGroupRejectPercentage (negative value)",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": -1},
        ["args.podGroupRejectPercentage: Invalid value: -1: must be between 0 and 100"],
    ),
    (
        "invalid PodGroupRejectPercentage (greater than 100)",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 150},
        ["args.podGroupRejectPercentage: Invalid value: 150: must be between 0 and 100"],
    ),
    (
        "both PermitWaitingTimeSeconds and PodGroupBackoffSeconds are negative",
        {"permitWaitingTimeSeconds": -30, "podGroupBackoffSeconds": -20, "podGroupRejectPercentage": 10},
        [
            "args.permitWaitingTimeSeconds: Invalid value: -30: must be greater than or equal to 0",
            "args.podGroupBackoffSeconds: Invalid value: -20: must be greater than or equal to 0",
        ],
    ),
]

# Same file, TestValidateNodeResourcesAllocatableArgs.
ALLOCATABLE_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "correct config with valid resources and mode",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}], "mode": "Least"},
        [],
    ),
    (
        "invalid resource weight (non-positive value)",
        {"resources": [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": -1}], "mode": "Least"},
        [
            "args.resources[0].weight: Invalid value: 0: resource weight of cpu should be a positive value",
            "args.resources[1].weight: Invalid value: -1: resource weight of memory should be a positive value",
        ],
    ),
    (
        "invalid ModeType",
        {
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}],
            "mode": "not existent",
        },
        ['args.mode: Invalid value: "not existent": invalid support ModeType'],
    ),
]


# v0.33.5's TestValidateCoschedulingArgs: v0.34.7's without podGroupRejectPercentage (v0.34.4-rc added it).
V0_33_5_COSCHEDULING_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("correct config with valid values", {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 60}, []),
    (
        "invalid PermitWaitingTimeSeconds (negative value)",
        {"permitWaitingTimeSeconds": -10, "podGroupBackoffSeconds": 60},
        ["args.permitWaitingTimeSeconds: Invalid value: -10: must be greater than or equal to 0"],
    ),
    (
        "invalid PodGroupBackoffSeconds (negative value)",
        {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": -20},
        ["args.podGroupBackoffSeconds: Invalid value: -20: must be greater than or equal to 0"],
    ),
    (
        "both PermitWaitingTimeSeconds and PodGroupBackoffSeconds are negative",
        {"permitWaitingTimeSeconds": -30, "podGroupBackoffSeconds": -20},
        [
            "args.permitWaitingTimeSeconds: Invalid value: -30: must be greater than or equal to 0",
            "args.podGroupBackoffSeconds: Invalid value: -20: must be greater than or equal to 0",
        ],
    ),
]
V0_33_5, V0_34_7, MAIN = "scheduler-plugins@v0.33.5", "scheduler-plugins@v0.34.7", "scheduler-plugins@main"
LATER = pytest.mark.parametrize("spec", [V0_34_7, MAIN])


@LATER
@pytest.mark.parametrize(("name", "args", "expected"), NRT_CASES, ids=[c[0] for c in NRT_CASES])
def test_node_resource_topology_match_table(
    spec: str, name: str, args: dict[str, Any], expected: list[str]
) -> None:
    assert errors("NodeResourceTopologyMatchArgs", args, spec=spec) == expected


@LATER
@pytest.mark.parametrize(
    ("name", "args", "expected"), COSCHEDULING_CASES, ids=[c[0] for c in COSCHEDULING_CASES]
)
def test_coscheduling_table(spec: str, name: str, args: dict[str, Any], expected: list[str]) -> None:
    assert errors("CoschedulingArgs", args, spec=spec) == expected


@LATER
@pytest.mark.parametrize(
    ("name", "args", "expected"), ALLOCATABLE_CASES, ids=[c[0] for c in ALLOCATABLE_CASES]
)
def test_node_resources_allocatable_table(
    spec: str, name: str, args: dict[str, Any], expected: list[str]
) -> None:
    assert errors("NodeResourcesAllocatableArgs", args, spec=spec) == expected


@pytest.mark.parametrize(
    ("name", "args", "expected"), V0_33_5_COSCHEDULING_CASES, ids=[c[0] for c in V0_33_5_COSCHEDULING_CASES]
)
def test_v0_33_5_coscheduling_table(name: str, args: dict[str, Any], expected: list[str]) -> None:
    assert errors("CoschedulingArgs", args, spec=V0_33_5) == expected


@pytest.mark.parametrize(
    ("name", "args", "expected"), NRT_CASES + ALLOCATABLE_CASES, ids=lambda c: str(c)[:40]
)
def test_v0_33_5_other_tables_are_v0_34_7s(name: str, args: dict[str, Any], expected: list[str]) -> None:
    """v0.33.5's NodeResourceTopologyMatch and NodeResourcesAllocatable tables equal v0.34.7's (the test
    file differs only in the Coscheduling cases)."""
    kind = (
        "NodeResourcesAllocatableArgs"
        if "mode" in args or "resources" in args
        else "NodeResourceTopologyMatchArgs"
    )
    assert errors(kind, args, spec=V0_33_5) == expected


def test_v0_34_7_coscheduling_cases_under_v0_33_5_refuse_the_newer_field() -> None:
    """podGroupRejectPercentage came with v0.34.4-rc: v0.33.5's decoder refuses it, naming the build."""
    for name, args, _ in COSCHEDULING_CASES:
        (refused, *rest) = errors("CoschedulingArgs", args, spec=V0_33_5)
        assert refused.startswith(
            'args.podGroupRejectPercentage: Forbidden: unknown field "podGroupRejectPercentage"'
        )
        assert (
            "it exists from v0.34.4-rc on" in refused and "--scheduler scheduler-plugins@v0.34.7" in refused
        )
        assert all("podGroupRejectPercentage" not in f for f in rest), name


# apis/config/scheme/scheme_test.go @ v0.34.7, TestCodecsDecodePluginConfig: the args-level cases.
def test_unknown_field_in_coscheduling_args_fails_decoding() -> None:
    """'coscheduling plugin args illegal to get validation error': kubeConfigPath is not a field (strict
    decoding error: unknown field "kubeConfigPath")."""
    assert errors("CoschedulingArgs", {"kubeConfigPath": "/var/run/kubernetes/kube.config"}) == [
        'args.kubeConfigPath: Forbidden: unknown field "kubeConfigPath"'
    ]


def test_network_aware_args_decode_as_given_and_absent_ones_default() -> None:
    """'v1 all plugin args in default profile' and 'v1 plugin args unspecified to verify the default
    profile': given values are kept, omitted ones get the defaults."""
    findings, out = run(
        "NetworkOverheadArgs",
        {"namespaces": ["networkAware"], "weightsName": "netCosts", "networkTopologyName": "net-topology-v1"},
    )
    assert findings == []
    assert out == {
        "namespaces": ["networkAware"],
        "weightsName": "netCosts",
        "networkTopologyName": "net-topology-v1",
    }
    assert run("TopologicalSortArgs", {"namespaces": ["networkAware"]}) == (
        [],
        {"namespaces": ["networkAware"]},
    )
    assert run("TopologicalSortArgs", {}) == ([], {"namespaces": ["default"]})
    assert run("NetworkOverheadArgs", {})[1] == {
        "namespaces": ["default"],
        "weightsName": "UserDefined",
        "networkTopologyName": "nt-default",
    }
    assert run("CoschedulingArgs", {})[1] == {
        "permitWaitingTimeSeconds": 60,
        "podGroupBackoffSeconds": 0,
        "podGroupRejectPercentage": 10,
    }
