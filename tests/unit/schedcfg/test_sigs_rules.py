"""Rules of the scheduler-plugins args kinds beyond the project's own tables: what decoding refuses, what each
plugin's constructor refuses (errors), and what it accepts but acts on surprisingly (warnings). Sources at
kubernetes-sigs/scheduler-plugins tag v0.34.7, named per test."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.schedcfg.sigs_helpers import BY_KIND, defaulted, errors, run, warnings

#: Args each kind's plugin accepts as they are (Peaks needs its load-watcher address).
VALID: dict[str, dict[str, Any]] = {kind: {} for kind in BY_KIND} | {
    "PeaksArgs": {"WatcherAddress": "http://w:2020"}
}


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_every_kind_decodes_strictly(kind: str) -> None:
    """The scheduler decodes args with kube-scheduler's strict codec (apis/config/scheme/scheme.go
    serializer.EnableStrict): an unknown field, another kind or an apiVersion other than v1 fails start-up."""
    valid = VALID[kind]
    assert errors(kind, valid) == []
    assert errors(kind, {**valid, "kind": kind, "apiVersion": "kubescheduler.config.k8s.io/v1"}) == []
    assert errors(kind, {**valid, "noSuchField": 1}) == [
        'args.noSuchField: Forbidden: unknown field "noSuchField"'
    ]
    assert errors(kind, {**valid, "kind": "OtherArgs"}) == [
        f'args.kind: Unsupported value: "OtherArgs": supported values: "{kind}"'
    ]
    assert errors(kind, {**valid, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"}) == [
        'args.apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: '
        '"kubescheduler.config.k8s.io/v1"'
    ]


def test_integer_fields_overflow_like_their_go_types() -> None:
    """CoschedulingArgs v1 types.go: permitWaitingTimeSeconds *int64, podGroupRejectPercentage *int32."""
    assert errors("CoschedulingArgs", {"permitWaitingTimeSeconds": 2**63}) == [
        f"args.permitWaitingTimeSeconds: Invalid value: {2**63}: does not fit in a 64-bit integer"
    ]
    assert errors("CoschedulingArgs", {"podGroupRejectPercentage": 2**31}) == [
        f"args.podGroupRejectPercentage: Invalid value: {2**31}: does not fit in a 32-bit integer"
    ]
    assert errors("CoschedulingArgs", {"podGroupRejectPercentage": 10.0})[0].startswith(
        "args.podGroupRejectPercentage: Invalid value: 10.0: must be of type integer"
    )


def test_coscheduling_zero_wait_means_the_default_wait() -> None:
    """pkg/util/podgroup.go GetWaitTimeDuration: a 0 schedule timeout falls back to DefaultWaitTime (60s)."""
    assert errors("CoschedulingArgs", {"permitWaitingTimeSeconds": 0}) == []
    assert [w.split(":")[0] for w in warnings("CoschedulingArgs", {"permitWaitingTimeSeconds": 0})] == [
        "args.permitWaitingTimeSeconds"
    ]
    assert warnings("CoschedulingArgs", {"permitWaitingTimeSeconds": 1}) == []


def test_allocatable_weights_are_never_defaulted() -> None:
    """SetDefaults_NodeResourcesAllocatableArgs fills resources only when the list is empty; a resource
    without weight keeps 0 and ValidateNodeResourcesAllocatableArgs refuses it."""
    assert errors("NodeResourcesAllocatableArgs", {"resources": [{"name": "cpu"}]}) == [
        "args.resources[0].weight: Invalid value: 0: resource weight of cpu should be a positive value"
    ]
    assert defaulted("NodeResourcesAllocatableArgs", {"resources": [], "mode": ""})["mode"] == "Least"


def test_allocatable_duplicate_and_strange_names_are_warnings() -> None:
    """NewAllocatable builds a map from the list (the last weight wins) and never checks names."""
    args = {
        "resources": [
            {"name": "cpu", "weight": 1},
            {"name": "cpu", "weight": 2},
            {"name": "gpu", "weight": 1},
        ]
    }
    assert errors("NodeResourcesAllocatableArgs", args) == []
    assert [w.split(":")[0] for w in warnings("NodeResourcesAllocatableArgs", args)] == [
        "args.resources[1].name",
        "args.resources[2].name",
    ]


def test_topology_match_strategy_type_is_required_when_the_strategy_is_given() -> None:
    """The strategy is defaulted only when absent; a given one without type keeps "" and fails validation."""
    assert errors("NodeResourceTopologyMatchArgs", {"scoringStrategy": {}}) == [
        'args.scoringStrategy.type: Invalid value: "": invalid ScoringStrategyType'
    ]
    for kind in ("MostAllocated", "BalancedAllocation", "LeastAllocated", "LeastNUMANodes"):
        assert run("NodeResourceTopologyMatchArgs", {"scoringStrategy": {"type": kind}})[0] == []


def test_topology_match_weights_below_one_score_as_one() -> None:
    """Defaulting turns 0 into 1; score.go resourceToWeightMap.weight uses 1 for any weight below 1."""
    args = {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]}}
    findings, out = run("NodeResourceTopologyMatchArgs", args)
    assert [(f.severity, f.path) for f in findings] == [
        ("warning", "args.scoringStrategy.resources[0].weight")
    ]
    assert out["scoringStrategy"]["resources"] == [{"name": "cpu", "weight": 1}]
    args = {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": -3}]}}
    assert errors("NodeResourceTopologyMatchArgs", args) == []
    assert len(warnings("NodeResourceTopologyMatchArgs", args)) == 1


@pytest.mark.parametrize("field", ["foreignPodsDetect", "resyncMethod", "informerMode", "resyncScope"])
def test_topology_match_unknown_cache_values_start_and_fall_back(field: str) -> None:
    """pluginhelpers.go, cache/overreserve.go, podprovider.go compare these strings with their constants and
    never refuse another value."""
    args = {"cacheResyncPeriodSeconds": 5, "cache": {field: "Sometimes"}}
    assert errors("NodeResourceTopologyMatchArgs", args) == []
    assert [w.split(":")[0] for w in warnings("NodeResourceTopologyMatchArgs", args)] == [
        f"args.cache.{field}"
    ]


def test_topology_match_cache_settings_unused_without_a_cache() -> None:
    """initNodeTopologyInformer: discardReservedNodes first, then a period <= 0 means no resync cache."""
    assert [
        w.split(":")[0]
        for w in warnings("NodeResourceTopologyMatchArgs", {"cache": {"informerMode": "Shared"}})
    ] == ["args.cache"]
    both = {"discardReservedNodes": True, "cacheResyncPeriodSeconds": 5}
    assert [w.split(":")[0] for w in warnings("NodeResourceTopologyMatchArgs", both)] == [
        "args.cacheResyncPeriodSeconds"
    ]
    assert (
        warnings(
            "NodeResourceTopologyMatchArgs",
            {"cacheResyncPeriodSeconds": 5, "cache": {"informerMode": "Shared"}},
        )
        == []
    )


TRIMARAN = ["TargetLoadPackingArgs", "LoadVariationRiskBalancingArgs", "LowRiskOverCommitmentArgs"]


@pytest.mark.parametrize("kind", TRIMARAN)
def test_trimaran_provider_type_is_checked_only_without_a_watcher(kind: str) -> None:
    """pkg/trimaran/collector.go checkSpecs; SetDefaultTrimaranSpec defaults the type only when
    watcherAddress is nil, so an explicit empty address with no provider fails too."""
    bad = {"metricProvider": {"type": "Graphite"}}
    assert [e.split(":")[0] for e in errors(kind, bad)] == ["args.metricProvider.type"]
    assert errors(kind, {**bad, "watcherAddress": "http://load-watcher:2020"}) == []
    assert [
        w.split(":")[0] for w in warnings(kind, {**bad, "watcherAddress": "http://load-watcher:2020"})
    ] == ["args.metricProvider"]
    assert [e.split(":")[0] for e in errors(kind, {"watcherAddress": ""})] == ["args.metricProvider.type"]
    assert run(kind, {})[0] == []


@pytest.mark.parametrize("kind", TRIMARAN)
def test_trimaran_prometheus_skips_tls_verification_unless_told(kind: str) -> None:
    """SetDefaultTrimaranSpec: Prometheus with insecureSkipVerify nil becomes true."""
    prometheus = {"metricProvider": {"type": "Prometheus", "address": "https://prometheus:9090"}}
    assert [w.split(":")[0] for w in warnings(kind, prometheus)] == ["args.metricProvider.insecureSkipVerify"]
    assert defaulted(kind, prometheus)["metricProvider"]["insecureSkipVerify"] is True
    explicit = {"metricProvider": {**prometheus["metricProvider"], "insecureSkipVerify": False}}
    assert run(kind, explicit)[0] == []


@pytest.mark.parametrize(
    ("multiplier", "parses"),
    [
        ("1.5", True),
        ("2", True),
        (".5", True),
        ("1e3", True),
        ("0x1p-2", True),
        ("+Inf", True),
        ("NaN", True),
        ("1.5x", False),
        ("", False),
        (" 1.5", False),
        ("1_000.5", True),
        ("1__0", False),
        ("_1", False),
        ("0x1", False),
        ("0x1p2000", False),
        ("1e", False),
        ("1" * 400, False),  # 1e399 overflows float64
        ("0." + "0" * 5000 + "1", True),  # underflows to 0 without an error
        ("0x" + "1" * 5000, False),
        ("1e400", False),
        ("-nan", False),
    ],
)
def test_target_load_packing_multiplier_must_parse_as_go_float(multiplier: str, parses: bool) -> None:
    """pkg/trimaran/targetloadpacking New: strconv.ParseFloat(args.DefaultRequestsMultiplier, 64) failing
    (syntax or range) stops the scheduler. Go's strconv/atof.go readFloat takes underscores between digits
    (underscoreOK) and needs a p exponent after a hex mantissa."""
    found = errors("TargetLoadPackingArgs", {"defaultRequestsMultiplier": multiplier})
    assert (found == []) is parses, found


def test_target_load_packing_target_and_default_requests() -> None:
    """SetDefaults_TargetLoadPackingArgs replaces a target <= 0 with 40; Score gives an idle node the target
    itself as score, outside 0-100 above 100; only DefaultRequests.Cpu() is read."""
    findings, out = run("TargetLoadPackingArgs", {"targetUtilization": 0})
    assert [(f.severity, f.path) for f in findings] == [("warning", "args.targetUtilization")]
    assert out["targetUtilization"] == 40
    assert [w.split(":")[0] for w in warnings("TargetLoadPackingArgs", {"targetUtilization": 120})] == [
        "args.targetUtilization"
    ]
    assert warnings("TargetLoadPackingArgs", {"targetUtilization": 100}) == []
    assert [
        w.split(":")[0] for w in warnings("TargetLoadPackingArgs", {"defaultRequests": {"memory": "1Gi"}})
    ] == [
        "args.defaultRequests",
        "args.defaultRequests.memory",
    ]
    assert errors("TargetLoadPackingArgs", {"defaultRequests": {"cpu": "1.5x"}}) == [
        'args.defaultRequests.cpu: Invalid value: "1.5x": must be a Kubernetes quantity (e.g. 500m, 2, 1.5Gi, 1e3)'
    ]
    assert run("TargetLoadPackingArgs", {"defaultRequests": {"cpu": 2}})[0] == []
    for zero in (None, "0", 0, "0m"):
        assert [
            w.split(":")[0] for w in warnings("TargetLoadPackingArgs", {"defaultRequests": {"cpu": zero}})
        ] == ["args.defaultRequests"]


def test_load_variation_negative_values_are_replaced() -> None:
    """SetDefaults_LoadVariationRiskBalancingArgs: a negative margin or sensitivity becomes 1; analysis.go
    computeScore raises the deviation to 1/sensitivity."""
    findings, out = run(
        "LoadVariationRiskBalancingArgs", {"safeVarianceMargin": -1, "safeVarianceSensitivity": 0}
    )
    assert [(f.severity, f.path) for f in findings] == [
        ("warning", "args.safeVarianceMargin"),
        ("warning", "args.safeVarianceSensitivity"),
    ]
    assert out["safeVarianceMargin"] == 1.0 and out["safeVarianceSensitivity"] == 0


def test_low_risk_window_weights_and_resources() -> None:
    """SetDefaults_LowRiskOverCommitmentArgs: window <= 0 -> 5, weights outside [0, 1] -> 0.5; computeRank
    reads the cpu and memory weights only."""
    args = {"smoothingWindowSize": 0, "riskLimitWeights": {"cpu": 2, "nvidia.com/gpu": 0.3}}
    findings, out = run("LowRiskOverCommitmentArgs", args)
    assert [(f.severity, f.path) for f in findings] == [
        ("warning", "args.smoothingWindowSize"),
        ("warning", "args.riskLimitWeights.cpu"),
        ("warning", 'args.riskLimitWeights["nvidia.com/gpu"]'),
    ]
    assert out["smoothingWindowSize"] == 5 and out["riskLimitWeights"] == {"cpu": 0.5, "nvidia.com/gpu": 0.3}


def test_peaks_fields_have_their_go_names() -> None:
    """v1 PeaksArgs carries malformed json tags, so the fields decode as WatcherAddress and NodePowerModel
    (pkg/trimaran/peaks/deployment/scheduler-config.yaml writes them so); New fails without an address."""
    good = {
        "WatcherAddress": "http://load-watcher:2020",
        "NodePowerModel": {"node-1": {"k0": 1, "k1": 2.5, "k2": 0.1}},
    }
    assert run("PeaksArgs", good)[0] == []
    assert errors(
        "PeaksArgs", {"watcherAddress": "http://load-watcher:2020", "NodePowerModel": good["NodePowerModel"]}
    ) == [
        'args.watcherAddress: Forbidden: unknown field "watcherAddress" (did you mean "WatcherAddress"?)',
        "args.WatcherAddress: Required value: the Peaks plugin reads load-watcher at this address; without it "
        'the collector has no metric provider ("invalid MetricProvider.Type") and scheduler-plugins '
        "v0.34.7 does not start",
    ]
    assert [w.split(":")[0] for w in warnings("PeaksArgs", {"WatcherAddress": "http://w:2020"})] == [
        "args.NodePowerModel"
    ]
    assert errors("PeaksArgs", {**good, "NodePowerModel": {"node-1": {"k0": "<replace with node 1 k0>"}}})[
        0
    ].startswith(
        'args.NodePowerModel["node-1"].k0: Invalid value: "<replace with node 1 k0>": must be of type number'
    )


def test_namespaces_empty_list_means_default() -> None:
    """SetDefaults_TopologicalSortArgs / SetDefaults_NetworkOverheadArgs: len(namespaces) == 0 -> ["default"]."""
    for kind in ("TopologicalSortArgs", "NetworkOverheadArgs"):
        findings, out = run(kind, {"namespaces": []})
        assert [(f.severity, f.path) for f in findings] == [("warning", "args.namespaces")]
        assert out["namespaces"] == ["default"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, []),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 10}, []),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                "args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesAbsolute",
                "args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesPercentage",
            ],
        ),
        (
            {"minCandidateNodesPercentage": 101},
            ["args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"],
        ),
        (
            {"minCandidateNodesAbsolute": -1},
            ["args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"],
        ),
    ],
)
def test_preemption_toleration_uses_default_preemption_rules(
    args: dict[str, Any], expected: list[str]
) -> None:
    """pkg/preemptiontoleration New runs kube-scheduler's ValidateDefaultPreemptionArgs
    (kubernetes pkg/scheduler/apis/config/validation/validation_pluginargs.go, 1.34) after
    SetDefaults_DefaultPreemptionArgs (10 %, 100)."""
    assert errors("PreemptionTolerationArgs", args) == expected
