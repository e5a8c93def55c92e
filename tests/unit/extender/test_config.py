"""The extender's scorer configuration and the documented KubeSchedulerConfiguration snippet."""

import asyncio

import pytest
import yaml

from limitguard.cli.main import build_parser
from limitguard.cli.startup import start_serve
from limitguard.core.config import ConfigError
from limitguard.core.scoring import DEFAULT_SCORERS, ScorerConfig
from limitguard.core.scoring.fitplus import FitPlusArgs, ResourceStrategy, Strategy
from limitguard.core.scoring.limitaware import LimitAwareArgs
from limitguard.core.scoring.scarce import ScarceResourceArgs
from limitguard.extender import ExtenderConfigError, extender_config_from_mapping
from limitguard.schedcfg import validate_text
from tests.support import REPO

DOCS = REPO / "docs"
DEMO_CLUSTER = REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml"


def test_absent_section_gives_the_built_in_scorers():
    assert extender_config_from_mapping(None).scorers == DEFAULT_SCORERS
    assert extender_config_from_mapping({}).scorers == DEFAULT_SCORERS
    assert (ScorerConfig("LimitAware", 1),) == DEFAULT_SCORERS


def test_every_scorer_with_its_args_kind():
    config = extender_config_from_mapping(
        {
            "scorers": [
                {
                    "name": "LimitAware",
                    "weight": 2,
                    "args": {
                        "kind": "LimitAwareArgs",
                        "scoringResourceWeights": {"cpu": 2, "memory": 1},
                        "defaultLimitToAllocatableRatio": {"cpu": "150%", "memory": 120},
                    },
                },
                {
                    "name": "NodeResourcesFitPlus",
                    "args": {
                        "kind": "ResourceTypesArgs",
                        "resources": {"nvidia.com/gpu": {"type": "MostAllocated", "weight": 2}},
                    },
                },
                {"name": "ScarceResourceAvoidance", "weight": 1, "args": {"resources": ["nvidia.com/gpu"]}},
                {"name": "PodState", "weight": 1},
            ]
        }
    )
    assert config.scorers == (
        ScorerConfig("LimitAware", 2, LimitAwareArgs({"cpu": 2, "memory": 1}, {"cpu": 150, "memory": 120})),
        ScorerConfig(
            "NodeResourcesFitPlus",
            1,
            FitPlusArgs({"nvidia.com/gpu": ResourceStrategy(Strategy.MOST_ALLOCATED, 2)}),
        ),
        ScorerConfig("ScarceResourceAvoidance", 1, ScarceResourceArgs(frozenset({"nvidia.com/gpu"}))),
        ScorerConfig("PodState", 1),
    )


def test_every_problem_is_reported_with_its_path_using_the_validator_rules():
    with pytest.raises(ExtenderConfigError) as raised:
        extender_config_from_mapping(
            {
                "scorer": [],
                "scorers": [
                    {"name": "LimitAware", "weight": 0},
                    {
                        "name": "NodeResourcesFitPlus",
                        "args": {"resources": {"nvidia.com/gpu": {"type": "MostAlocated", "weight": 2}}},
                    },
                    {"name": "ScarceResourceAvoidance", "args": {"kind": "LimitAwareArgs"}},
                    {"name": "PodState", "args": {"x": 1}},
                    {"name": "Spread"},
                    {"name": "PodState", "wieght": 1},
                ],
            }
        )
    assert raised.value.problems == [
        "extender.scorer: unknown field (expected scorers)",
        "extender.scorers[0].weight: Invalid value: 0: must be an integer in [1, 100]",
        'extender.scorers[1].args.resources["nvidia.com/gpu"].type: Unsupported value: "MostAlocated": '
        'supported values: "LeastAllocated", "MostAllocated"',
        'extender.scorers[2].args.kind: Unsupported value: "LimitAwareArgs": supported values: '
        '"ScarceResourceAvoidanceArgs"',
        "extender.scorers[3].args: PodState takes no args",
        "extender.scorers[4].name: Unsupported value: 'Spread': supported values: \"LimitAware\", "
        '"NodeResourcesFitPlus", "ScarceResourceAvoidance", "PodState"',
        "extender.scorers[5].wieght: unknown field (expected name, weight, args)",
        "extender.scorers[5].name: Duplicate value: 'PodState' (also scorers[3])",
    ]


def test_documented_scheduler_configuration_is_valid():
    report = validate_text(
        (DOCS / "extender-scheduler-config.yaml").read_text(), "extender-scheduler-config.yaml"
    )
    assert report.ok, report.format()
    document = yaml.safe_load((DOCS / "extender-scheduler-config.yaml").read_text())
    (extender,) = document["extenders"]
    assert extender["urlPrefix"].endswith("/extender")
    verbs = ("filterVerb", "prioritizeVerb", "preemptVerb")
    assert [extender[verb] for verb in verbs] == ["filter", "prioritize", "preempt"]
    assert extender["nodeCacheCapable"] is True and extender["enableHTTPS"] is True
    assert extender["weight"] >= 1 and "caFile" in extender["tlsConfig"]


def test_documented_extender_section_parses():
    text = (DOCS / "extender.md").read_text()  # the extender section documented in docs/extender.md
    block = text.split("```yaml\n# limitguard configuration: extender section\n", 1)[1].split("```", 1)[0]
    config = extender_config_from_mapping(yaml.safe_load(block)["extender"])
    assert [scorer.name for scorer in config.scorers] == [
        "LimitAware",
        "NodeResourcesFitPlus",
        "ScarceResourceAvoidance",
        "PodState",
    ]


SCORER_DOMAIN_ERRORS = [
    (
        "NodeResourcesFitPlus",
        {"resources": {"cpu": {"type": "MostAlocated", "weight": 1}}},
        'extender.scorers[0].args.resources.cpu.type: Unsupported value: "MostAlocated"',
    ),
    (
        "NodeResourcesFitPlus",
        {"resources": {"cpu": {"type": "MostAllocated", "weight": -1}}},
        "extender.scorers[0].args.resources.cpu.weight: Invalid value: -1",
    ),
    (
        "NodeResourcesFitPlus",
        {"resources": {"nvidia.com/gpu/extra": {"type": "MostAllocated", "weight": 1}}},
        'extender.scorers[0].args.resources["nvidia.com/gpu/extra"]: Invalid value: "nvidia.com/gpu/extra"',
    ),
    (
        "ScarceResourceAvoidance",
        {"resources": ["nvidia.com/gpu/extra"]},
        'extender.scorers[0].args.resources[0]: Invalid value: "nvidia.com/gpu/extra"',
    ),
    (
        "LimitAware",
        {"scoringResourceWeights": {"gpu": 1}},
        'extender.scorers[0].args.scoringResourceWeights.gpu: Invalid value: "gpu"',
    ),
]


@pytest.mark.parametrize(("name", "args", "problem"), SCORER_DOMAIN_ERRORS)
def test_a_scorer_args_typo_stops_serve_at_start_up(name, args, problem, tmp_path):
    """The same domain the validator enforces on the design documents' args: serve stops naming the
    field before it binds anything."""
    with pytest.raises(ExtenderConfigError) as error:
        extender_config_from_mapping({"scorers": [{"name": name, "args": args}]})
    assert len(error.value.problems) == 1 and error.value.problems[0].startswith(problem)
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "limitguard.io/v1alpha1",
                "kind": "LimitGuardConfiguration",
                "extender": {"scorers": [{"name": name, "args": args}]},
            }
        )
    )
    args = build_parser("serve").parse_args(
        ["serve", "--config", str(config), "--cluster", str(DEMO_CLUSTER)]
    )
    with pytest.raises(ConfigError) as stopped:  # serve's run prints it and exits 2
        asyncio.run(start_serve(args, environ={}))
    assert problem in str(stopped.value)
