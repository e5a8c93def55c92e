"""Koordinator's own validation tables, translated: limitguard's verdict on each args kind equals each
koord-scheduler build's (an error exactly where the plugin's constructor refuses the args, so the scheduler
does not start), run under koord-scheduler@v1.7.0, @v1.8.0 and @main.

The tables come from koordinator-sh/koordinator pkg/scheduler/apis/config/validation/
validation_pluginargs_test.go, the only validation test file of the project: it arrived on main after
v1.8.0 (PR #3025, commit c7068c6d); neither v1.7.0 nor v1.8.0 has one. The functions it tests are v1.8.0's
and main's, except the ReservationArgs ignoredResources/ignoredResourceGroups rules (PR #3067, main only):
for v1.8.0 and v1.7.0 those fields are unknown. v1.7.0's functions are v1.8.0's without the
gcIntervalSeconds/resyncIntervalSeconds checks and without SchedulingHintArgs (both came with v1.8.0), so
under v1.7.0 a case using those fields is an unknown-field error instead. The Go tests pass internal
(already defaulted) args; these give the same args as a user writes them, so where defaulting changes the
outcome the case says so.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.schedcfg.helpers import check, with_args
from tests.unit.schedcfg.koord_helpers import errors

Case = tuple[str, dict[str, Any], list[str]]

# validation_pluginargs_test.go @ c7068c6d (main), TestValidateLoadAwareSchedulingArgs.
LOADAWARE_CASES: list[Case] = [
    ("empty args", {}, []),
    ("valid nodeMetricExpirationSeconds", {"nodeMetricExpirationSeconds": 180}, []),
    (
        "zero nodeMetricExpirationSeconds",
        {"nodeMetricExpirationSeconds": 0},
        [
            "args.nodeMetricExpirationSeconds: Invalid value: 0: nodeMetricExpiredSeconds should be a positive value"
        ],
    ),
    (
        "negative nodeMetricExpirationSeconds",
        {"nodeMetricExpirationSeconds": -1},
        [
            "args.nodeMetricExpirationSeconds: Invalid value: -1: nodeMetricExpiredSeconds should be a positive value"
        ],
    ),
    (
        "valid resource weights",
        {"resourceWeights": {"cpu": 1, "memory": 1}, "estimatedScalingFactors": {"cpu": 85, "memory": 70}},
        [],
    ),
    (
        "resource weight zero",
        {"resourceWeights": {"cpu": 0}, "estimatedScalingFactors": {"cpu": 85}},
        [
            "args.resourceWeights.cpu: Invalid value: 0: resource Weight of cpu should be a positive value, got 0"
        ],
    ),
    (
        "resource weight exceeds 100",
        {"resourceWeights": {"cpu": 101}, "estimatedScalingFactors": {"cpu": 85}},
        [
            "args.resourceWeights.cpu: Invalid value: 101: resource Weight of cpu should be less than 100, got 101"
        ],
    ),
    (
        "dominantResourceWeight negative",
        {"dominantResourceWeight": -1},
        [
            "args.dominantResourceWeight: Invalid value: -1: dominantResourceWeight should not be a negative value"
        ],
    ),
    (
        "dominantResourceWeight exceeds 100",
        {"dominantResourceWeight": 101},
        ["args.dominantResourceWeight: Invalid value: 101: dominantResourceWeight should be less than 100"],
    ),
    ("valid dominantResourceWeight boundary", {"dominantResourceWeight": 100}, []),
    (
        "usageThreshold negative",
        {"usageThresholds": {"cpu": -1}},
        [
            "args.usageThresholds.cpu: Invalid value: -1: resource Threshold of cpu should be a positive value, got -1"
        ],
    ),
    (
        "usageThreshold exceeds 100",
        {"usageThresholds": {"cpu": 101}},
        [
            "args.usageThresholds.cpu: Invalid value: 101: resource Threshold of cpu should be less than 100, got 101"
        ],
    ),
    (
        "estimatedScalingFactor zero",
        {"estimatedScalingFactors": {"cpu": 0}},
        [
            "args.estimatedScalingFactors.cpu: Invalid value: 0: estimated resource ScalingFactor of cpu should be "
            "a positive value, got 0"
        ],
    ),
    (
        "estimatedScalingFactor exceeds 100",
        {"estimatedScalingFactors": {"cpu": 101}},
        [
            "args.estimatedScalingFactors.cpu: Invalid value: 101: estimated resource ScalingFactor of cpu should "
            "be less than 100, got 101"
        ],
    ),
    # The Go case gives internal args {cpu: 1} / {} and expects an error; written by a user, the empty map
    # gets cpu 85 and memory 70 from SetDefaults_LoadAwareSchedulingArgs first, so cpu is found.
    (
        "resourceWeight missing estimatedScalingFactor (cpu is defaulted)",
        {"resourceWeights": {"cpu": 1}, "estimatedScalingFactors": {}},
        [],
    ),
    (
        "resourceWeight missing estimatedScalingFactor (a resource without a default)",
        {"resourceWeights": {"nvidia.com/gpu": 1}, "estimatedScalingFactors": {}},
        [
            'args.estimatedScalingFactors: Not found: "nvidia.com/gpu" (every resource in resourceWeights needs an '
            "estimated scaling factor)"
        ],
    ),
    (
        "valid aggregated args",
        {
            "aggregated": {
                "usageAggregationType": "p95",
                "usageAggregatedDuration": "1m",
                "scoreAggregationType": "p90",
                "scoreAggregatedDuration": "1m",
            }
        },
        [],
    ),
    (
        "invalid aggregation type",
        {"aggregated": {"usageAggregationType": "invalid"}},
        [
            'args.aggregated.usageAggregationType: Invalid value: "invalid": supported values: "avg", "p50", '
            '"p90", "p95", "p99"'
        ],
    ),
    (
        "negative aggregated duration",
        {"aggregated": {"usageAggregatedDuration": "-1m"}},
        ['args.aggregated.usageAggregatedDuration: Invalid value: "-1m": duration must be >= 0'],
    ),
]

# Same file, TestValidateElasticQuotaArgs.
ELASTICQUOTA_CASES: list[Case] = [
    ("empty args", {}, []),
    ("valid defaultQuotaGroupMax", {"defaultQuotaGroupMax": {"cpu": "10", "memory": "20Gi"}}, []),
    (
        "negative defaultQuotaGroupMax",
        {"defaultQuotaGroupMax": {"cpu": "-1"}},
        [
            'args.defaultQuotaGroupMax.cpu: Invalid value: "-1": elasticQuotaArgs error, defaultQuotaGroupMax '
            "should be a positive value, resourceName:cpu"
        ],
    ),
    (
        "negative systemQuotaGroupMax",
        {"systemQuotaGroupMax": {"memory": "-1Gi"}},
        [
            'args.systemQuotaGroupMax.memory: Invalid value: "-1Gi": elasticQuotaArgs error, systemQuotaGroupMax '
            "should be a positive value, resourceName:memory"
        ],
    ),
    (
        "negative delayEvictTime",
        {"delayEvictTime": "-1s"},
        [
            'args.delayEvictTime: Invalid value: "-1s": elasticQuotaArgs error, DelayEvictTime should be a positive value'
        ],
    ),
    (
        "negative revokePodInterval",
        {"revokePodInterval": "-1s"},
        [
            'args.revokePodInterval: Invalid value: "-1s": elasticQuotaArgs error, RevokePodCycle should be a positive value'
        ],
    ),
    ("valid durations", {"delayEvictTime": "1m", "revokePodInterval": "1s"}, []),
]

# Same file, TestValidateCoschedulingArgs.
COSCHEDULING_CASES: list[Case] = [
    ("valid args", {"defaultTimeout": "10m", "controllerWorkers": 1}, []),
    (
        "negative defaultTimeout",
        {"defaultTimeout": "-1s", "controllerWorkers": 1},
        ['args.defaultTimeout: Invalid value: "-1s": coeSchedulingArgs DefaultTimeoutSeconds invalid'],
    ),
    (
        "controllerWorkers zero",
        {"controllerWorkers": 0},
        ["args.controllerWorkers: Invalid value: 0: coeSchedulingArgs ControllerWorkers invalid"],
    ),
    (
        "controllerWorkers negative",
        {"controllerWorkers": -1},
        ["args.controllerWorkers: Invalid value: -1: coeSchedulingArgs ControllerWorkers invalid"],
    ),
]

# Same file, TestValidateDeviceShareArgs. The Go test calls the validation function alone, whose strategy
# may lack a type; the plugin's constructor then finds no scorer for "" (deviceshare/plugin.go New), so a
# strategy as the test writes it stops koord-scheduler - these cases name the type.
DEVICESHARE_CASES: list[Case] = [
    ("nil scoring strategy (defaulted)", {}, []),
    (
        "valid scoring strategy",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 100}],
            }
        },
        [],
    ),
    (
        "resource weight zero",
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
        [
            "args.scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]"
        ],
    ),
    (
        "resource weight exceeds 100",
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
        [
            "args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid "
            "range (0, 100]"
        ],
    ),
    (
        "the Go test's strategy without a type",
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}},
        [
            'args.scoringStrategy.type: Invalid value: "": scoring strategy  is not supported (supported: '
            '"LeastAllocated", "MostAllocated")'
        ],
    ),
]

# Same file, TestValidateReservationArgs: the cases v1.8.0 and main agree on.
RESERVATION_CASES: list[Case] = [
    (
        "valid defaults",
        {
            "minCandidateNodesPercentage": 10,
            "minCandidateNodesAbsolute": 100,
            "gcDurationSeconds": 86400,
            "gcIntervalSeconds": 60,
            "resyncIntervalSeconds": 60,
        },
        [],
    ),
    (
        "zero values are valid",
        {
            "minCandidateNodesPercentage": 0,
            "minCandidateNodesAbsolute": 0,
            "gcDurationSeconds": 0,
            "gcIntervalSeconds": 0,
            "resyncIntervalSeconds": 0,
        },
        [],
    ),
    (
        "minCandidateNodesPercentage negative",
        {"minCandidateNodesPercentage": -1},
        ["args.minCandidateNodesPercentage: Invalid value: -1: must be in the range [0, 100]"],
    ),
    (
        "minCandidateNodesPercentage exceeds 100",
        {"minCandidateNodesPercentage": 101},
        ["args.minCandidateNodesPercentage: Invalid value: 101: must be in the range [0, 100]"],
    ),
    (
        "minCandidateNodesAbsolute negative",
        {"minCandidateNodesAbsolute": -1},
        ["args.minCandidateNodesAbsolute: Invalid value: -1: must be non-negative"],
    ),
    (
        "gcDurationSeconds negative",
        {"gcDurationSeconds": -1},
        ["args.gcDurationSeconds: Invalid value: -1: must be non-negative"],
    ),
    (
        "gcIntervalSeconds negative",
        {"gcIntervalSeconds": -1},
        ["args.gcIntervalSeconds: Invalid value: -1: must be non-negative"],
    ),
    (
        "resyncIntervalSeconds negative",
        {"resyncIntervalSeconds": -1},
        ["args.resyncIntervalSeconds: Invalid value: -1: must be non-negative"],
    ),
]

# Same file, TestValidateReservationArgs, the ignoredResources / ignoredResourceGroups cases (PR #3067, after
# v1.8.0): main's verdict, then v1.8.0's - every one refused as an unknown field.
RESERVATION_MAIN_ONLY_CASES: list[tuple[str, dict[str, Any], bool]] = [
    (
        "valid ignoredResourceGroups",
        {"ignoredResources": ["example.com/gpu"], "ignoredResourceGroups": ["example.com"]},
        False,
    ),
    ("ignoredResourceGroups contains slash", {"ignoredResourceGroups": ["example.com/invalid"]}, True),
    ("ignoredResources with invalid label name", {"ignoredResources": ["-invalid/gpu"]}, True),
    ("ignoredResourceGroups with invalid label name", {"ignoredResourceGroups": ["-invalid"]}, True),
    (
        "empty ignoredResources and ignoredResourceGroups",
        {"ignoredResources": [], "ignoredResourceGroups": []},
        False,
    ),
    ("native resource cpu rejected from ignoredResources", {"ignoredResources": ["cpu"]}, True),
    ("native resource memory rejected from ignoredResources", {"ignoredResources": ["memory"]}, True),
    ("native resource pods rejected from ignoredResources", {"ignoredResources": ["pods"]}, True),
    ("native resource ephemeral-storage rejected", {"ignoredResources": ["ephemeral-storage"]}, True),
    ("hugepages-2Mi rejected from ignoredResources", {"ignoredResources": ["hugepages-2Mi"]}, True),
    ("kubernetes.io-prefixed name rejected", {"ignoredResources": ["kubernetes.io/gpu"]}, True),
    ("kubernetes.io rejected as ignoredResourceGroup", {"ignoredResourceGroups": ["kubernetes.io"]}, True),
]

# Same file, TestValidateNodeNUMAResourceArgs. validStrategy there has no type (see DeviceShare above): here
# it is LeastAllocated. The two "nil strategy" cases cannot be written: an omitted or null strategy is
# defaulted before validation, so a user's args never reach the Required error.
VALID_STRATEGY = {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}]}
NUMA_CASES: list[Case] = [
    (
        "valid args with empty bind policy",
        {
            "defaultCPUBindPolicy": "",
            "scoringStrategy": VALID_STRATEGY,
            "numaScoringStrategy": VALID_STRATEGY,
        },
        [],
    ),
    (
        "valid FullPCPUs bind policy",
        {
            "defaultCPUBindPolicy": "FullPCPUs",
            "scoringStrategy": VALID_STRATEGY,
            "numaScoringStrategy": VALID_STRATEGY,
        },
        [],
    ),
    (
        "valid SpreadByPCPUs bind policy",
        {
            "defaultCPUBindPolicy": "SpreadByPCPUs",
            "scoringStrategy": VALID_STRATEGY,
            "numaScoringStrategy": VALID_STRATEGY,
        },
        [],
    ),
    (
        "invalid CPU bind policy",
        {
            "defaultCPUBindPolicy": "InvalidPolicy",
            "scoringStrategy": VALID_STRATEGY,
            "numaScoringStrategy": VALID_STRATEGY,
        },
        [
            'args.defaultCPUBindPolicy: Invalid value: "InvalidPolicy": must specified CPU bind policy FullPCPUs or SpreadByPCPUs'
        ],
    ),
    ("nil ScoringStrategy (defaulted)", {"scoringStrategy": None, "numaScoringStrategy": VALID_STRATEGY}, []),
    ("nil NUMAScoringStrategy (defaulted)", {"scoringStrategy": VALID_STRATEGY}, []),
    (
        "invalid resource weight in ScoringStrategy",
        {
            "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]},
            "numaScoringStrategy": VALID_STRATEGY,
        },
        [
            "args.scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]"
        ],
    ),
]

# Same file, TestValidateSchedulingHintArgs.
SCHEDULINGHINT_CASES: list[Case] = [
    ("valid maxHintNodes", {"maxHintNodes": 100}, []),
    ("maxHintNodes one", {"maxHintNodes": 1}, []),
    (
        "maxHintNodes zero",
        {"maxHintNodes": 0},
        ["args.maxHintNodes: Invalid value: 0: must be a positive value"],
    ),
    (
        "maxHintNodes negative",
        {"maxHintNodes": -1},
        ["args.maxHintNodes: Invalid value: -1: must be a positive value"],
    ),
]

# koordinator-sh/koordinator pkg/scheduler/plugins/schedulinghint/scheduling_hint_test.go @ v1.8.0, the
# table of its New test (the constructor runs ValidateSchedulingHintArgs); "wrong args type" is a kind the
# decoder refuses for plugin SchedulingHint.
SCHEDULINGHINT_NEW_CASES: list[Case] = [
    ("valid args with default MaxHintNodes", {"maxHintNodes": 100}, []),
    ("valid args with custom MaxHintNodes", {"maxHintNodes": 50}, []),
    (
        "wrong args type",
        {"kind": "LoadAwareSchedulingArgs"},
        ['args.kind: Unsupported value: "LoadAwareSchedulingArgs": supported values: "SchedulingHintArgs"'],
    ),
    (
        "invalid args - MaxHintNodes is zero",
        {"maxHintNodes": 0},
        ["args.maxHintNodes: Invalid value: 0: must be a positive value"],
    ),
    (
        "invalid args - MaxHintNodes is negative",
        {"maxHintNodes": -1},
        ["args.maxHintNodes: Invalid value: -1: must be a positive value"],
    ),
]

TABLES = {
    "LoadAwareSchedulingArgs": LOADAWARE_CASES,
    "ElasticQuotaArgs": ELASTICQUOTA_CASES,
    "CoschedulingArgs": COSCHEDULING_CASES,
    "DeviceShareArgs": DEVICESHARE_CASES,
    "ReservationArgs": RESERVATION_CASES,
    "NodeNUMAResourceArgs": NUMA_CASES,
    "SchedulingHintArgs": SCHEDULINGHINT_CASES,
}
CASES = [(kind, *case) for kind, cases in TABLES.items() for case in cases]
CASES += [("SchedulingHintArgs", *case) for case in SCHEDULINGHINT_NEW_CASES]


V1_7_0, V1_8_0, MAIN = "koord-scheduler@v1.7.0", "koord-scheduler@v1.8.0", "koord-scheduler@main"
#: Fields v1.7.0 does not have (they came with v1.8.0), among those the tables use.
NEWER_THAN_V1_7 = ("gcIntervalSeconds", "resyncIntervalSeconds")


@pytest.mark.parametrize("spec", [V1_8_0, MAIN])
@pytest.mark.parametrize(("kind", "name", "args", "expected"), CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_upstream_case(spec: str, kind: str, name: str, args: dict[str, Any], expected: list[str]) -> None:
    assert errors(kind, args, spec) == expected, name


V1_7_CASES = [case for case in CASES if case[0] != "SchedulingHintArgs"]


@pytest.mark.parametrize(
    ("kind", "name", "args", "expected"), V1_7_CASES, ids=[f"{c[0]}: {c[1]}" for c in V1_7_CASES]
)
def test_upstream_case_under_v1_7(kind: str, name: str, args: dict[str, Any], expected: list[str]) -> None:
    """The same verdict, but for the fields v1.7.0's decoder lacks: refused, naming v1.8.0."""
    newer = [field for field in NEWER_THAN_V1_7 if field in args]
    found = errors(kind, args, V1_7_0)
    refused = [f for f in found if "Forbidden: unknown field" in f]
    assert [f.split(":")[0] for f in refused] == [f"args.{field}" for field in newer], name
    assert all("--scheduler koord-scheduler@v1.8.0" in f for f in refused)
    assert [f for f in found if f not in refused] == [
        e for e in expected if e.split(":")[0] not in {f"args.{n}" for n in newer}
    ]


def test_scheduling_hint_has_no_args_kind_in_v1_7() -> None:
    """v1.7.0 registers SchedulingHint but no SchedulingHintArgs (register.go gained it in v1.8.0): its
    args are not decoded and the plugin ignores them, so even maxHintNodes 0 starts the scheduler."""
    document = with_args("SchedulingHint", {"maxHintNodes": 0}, score=False)
    document["profiles"][0]["plugins"] = {"preFilter": {"enabled": [{"name": "SchedulingHint"}]}}
    report = check(document, scheduler=V1_7_0)
    assert report.ok and [f.rule for f in report.warnings] == ["args.ignored"], report.format()
    assert "koord-scheduler v1.8.0 has an args kind for it" in report.warnings[0].message
    assert [f.rule for f in check(document, scheduler=V1_8_0).errors] == ["koord.schedulinghint.max"]


@pytest.mark.parametrize(
    ("name", "args", "main_refuses"),
    RESERVATION_MAIN_ONLY_CASES,
    ids=[c[0] for c in RESERVATION_MAIN_ONLY_CASES],
)
def test_main_only_fields(name: str, args: dict[str, Any], main_refuses: bool) -> None:
    """main judges them by PR #3067's rules; v1.8.0's and v1.7.0's strict decoders refuse the fields,
    naming main and how to choose it."""
    assert bool(errors("ReservationArgs", args, MAIN)) == main_refuses, name
    for spec in (V1_8_0, V1_7_0):
        found = errors("ReservationArgs", args, spec)
        assert [f.split(":")[0] for f in found] == [f"args.{field}" for field in args], (name, spec)
        assert all("unknown field" in f and "--scheduler koord-scheduler@main" in f for f in found)


def test_main_ignored_resources_messages() -> None:
    """ValidateReservationArgs on main (a7a1b76b): one error per entry, at its index."""
    args = {"ignoredResources": ["example.com/gpu", "cpu"], "ignoredResourceGroups": ["a/b", "kubernetes.io"]}
    assert errors("ReservationArgs", args, MAIN) == [
        'args.ignoredResources[1]: Invalid value: "cpu": must be an extended resource name (e.g. '
        "example.com/gpu); native resources cannot be ignored",
        "args.ignoredResourceGroups[0]: Invalid value: \"a/b\": resource group name can't contain '/'",
        'args.ignoredResourceGroups[1]: Invalid value: "kubernetes.io": must be usable as an extended resource '
        'prefix (a valid DNS subdomain and not the reserved "kubernetes.io" namespace)',
    ]


def test_reservation_selector_index_is_main_only_too() -> None:
    """reservationSelectorIndex: Koordinator PR #3009 (main, after v1.8.0)."""
    args = {"reservationSelectorIndex": {"enabled": True, "keys": ["tenant"]}}
    assert errors("ReservationArgs", args, MAIN) == []
    (refused,) = errors("ReservationArgs", args, V1_8_0)
    assert "koord-scheduler main (a7a1b76b) has it" in refused
    assert errors("ReservationArgs", {"reservationSelectorIndex": {"enable": True}}, MAIN) == [
        'args.reservationSelectorIndex.enable: Forbidden: unknown field "enable" (did you mean "enabled"?)'
    ]
