"""One test per rule of the other in-tree args and of the args dispatch, each with its valid and its invalid side."""

from __future__ import annotations

from typing import Any

from tests.unit.schedcfg.helpers import check, config, fit_plus, messages, paths, with_args

ARGS0 = "profiles[0].pluginConfig[0].args"


# ------------------------------------------------------------------------------------------ other in-tree args
def test_default_preemption_not_both_zero() -> None:
    assert check(with_args("DefaultPreemption", {"minCandidateNodesPercentage": 0}, score=False)).ok
    report = check(
        with_args(
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            score=False,
        )
    )
    assert paths(report) == [f"{ARGS0}.minCandidateNodesPercentage", f"{ARGS0}.minCandidateNodesAbsolute"]


def test_inter_pod_affinity_weight_range() -> None:
    assert check(with_args("InterPodAffinity", {"hardPodAffinityWeight": 100})).ok
    assert paths(check(with_args("InterPodAffinity", {"hardPodAffinityWeight": 101}))) == [
        f"{ARGS0}.hardPodAffinityWeight"
    ]


def test_pod_topology_spread_rules() -> None:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
    }
    assert check(
        with_args("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [constraint]})
    ).ok
    report = check(
        with_args(
            "PodTopologySpread",
            {
                "defaultConstraints": [
                    constraint,
                    {**constraint, "labelSelector": {"matchLabels": {"a": "b"}}},
                ]
            },
        )
    )
    assert sorted(paths(report)) == [
        f"{ARGS0}.defaultConstraints[1]",
        f"{ARGS0}.defaultConstraints[1].labelSelector",
        f"{ARGS0}.defaultingType",
    ]


def test_node_affinity_requirements() -> None:
    def term(req: dict[str, Any], fields: bool = False) -> dict[str, Any]:
        key = "matchFields" if fields else "matchExpressions"
        return with_args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{key: [req]}]}
                }
            },
        )

    base = f"{ARGS0}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    assert check(term({"key": "zone", "operator": "In", "values": ["a"]})).ok
    assert check(term({"key": "metadata.name", "operator": "In", "values": ["n1"]}, fields=True)).ok
    assert paths(check(term({"key": "zone", "operator": "In"}))) == [f"{base}.matchExpressions[0].values"]
    assert paths(check(term({"key": "cores", "operator": "Gt", "values": ["x"]}))) == [
        f"{base}.matchExpressions[0].values[0]"
    ]
    assert paths(check(term({"key": "metadata.uid", "operator": "In", "values": ["u"]}, fields=True))) == [
        f"{base}.matchFields[0].key"
    ]


# ------------------------------------------------------------------------------------------ dispatch
def test_args_kind_must_match_the_plugin() -> None:
    report = check(fit_plus({"cpu": {"type": "LeastAllocated", "weight": 1}}, kind="NodeResourcesFitPlus"))
    assert messages(report) == [
        f'{ARGS0}.kind: Unsupported value: "NodeResourcesFitPlus": supported values: '
        '"NodeResourcesFitPlusArgs", "ResourceTypesArgs"'
    ]


def test_args_kind_mismatch_still_reports_other_errors() -> None:
    report = check(fit_plus({"cpu": {"type": "Most", "weight": 1}}, kind="NodeResourcesFitArgs"))
    assert paths(report) == [f"{ARGS0}.kind", f"{ARGS0}.resources.cpu.type"]


def test_args_api_version_differing_from_the_config_is_a_warning() -> None:
    args = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta3",
        "kind": "ScarceResourceAvoidanceArgs",
        "resources": ["nvidia.com/gpu"],
    }
    report = check(with_args("ScarceResourceAvoidance", args))
    assert report.ok and paths(report, "warning") == [f"{ARGS0}.apiVersion"]


def test_unknown_plugin_args_pass_through_with_a_note() -> None:
    report = check(with_args("MyPlugin", {"anything": {"goes": [1, 2]}}))
    assert report.ok and [f.rule for f in report.infos] == ["args.unknown-plugin"]


def test_every_error_is_reported_not_just_the_first() -> None:
    doc = config(
        parallelism=0,
        healthzBindAddress="x",
        profiles=[
            {
                "schedulerName": "a",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFitPlus",
                        "args": {"resources": {"cpu": {"type": "MostAlocated", "weight": 101}}},
                    }
                ],
            },
            {"schedulerName": "a"},
        ],
        extenders=[{"urlPrefix": "u", "prioritizeVerb": "p"}],
    )
    assert sorted(paths(check(doc))) == sorted(
        [
            "parallelism",
            "healthzBindAddress",
            f"{ARGS0}.resources.cpu.type",
            f"{ARGS0}.resources.cpu.weight",
            "profiles[1].schedulerName",
            "extenders[0].weight",
        ]
    )
