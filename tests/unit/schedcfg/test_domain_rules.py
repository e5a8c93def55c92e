"""The documented domain of the design documents' args, enforced where koord-scheduler checks nothing.

koord-scheduler v1.8.0 has no defaulting or validation for NodeResourcesFitPlusArgs and
ScarceResourceAvoidanceArgs (pkg/scheduler/apis/config/validation/validation_pluginargs.go has no function
for them; noderesourcefitplus/node_resources_fit_plus.go:48 and
scarceresourceavoidance/scarce_resource_avoidance.go:50 only assert the args' type), so it starts with any
value. What its scorers then do (noderesourcefitplus/node_resource_fit_plus_utils.go:58-87: no case for
another type, the weight always added; scarce_resource_avoidance.go:82-89: names intersected with the
node's) makes a typo'd type, a negative weight and an invalid resource name errors here; a weight of 0
stays a warning. The JSON Schemas carry the same domain for editors.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from limitguard.cli.validate import main as validate_main
from limitguard.core.names import RESOURCE_NAME_PATTERN
from limitguard.schedcfg import schemas
from tests.support import FIXTURES, REPO
from tests.unit.schedcfg.helpers import check, config

KOORD = "koord-scheduler"
ARGS0 = "profiles[0].pluginConfig[0].args"
STARTS = "koord-scheduler starts with it, but"


def profile(plugin: str, args: dict[str, Any], *, enabled: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "schedulerName": "koord-scheduler",
        "pluginConfig": [{"name": plugin, "args": args}],
    }
    if enabled:
        entry["plugins"] = {"score": {"enabled": [{"name": plugin}]}}
    return config(profiles=[entry])


def fit_plus(resources: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return profile(
        "NodeResourcesFitPlus", {"kind": "NodeResourcesFitPlusArgs", "resources": resources}, **kwargs
    )


def scarce(names: list[str], **kwargs: Any) -> dict[str, Any]:
    return profile("ScarceResourceAvoidance", {"resources": names}, **kwargs)


def limit_aware(weights: dict[str, Any]) -> dict[str, Any]:
    return profile("LimitAware", {"scoringResourceWeights": weights})


GOOD_GPU = {"type": "MostAllocated", "weight": 2}

#: (configuration, error path, rule, what the message says koord-scheduler would do)
ERRORS = {
    "typo'd type": (
        fit_plus({"nvidia.com/gpu": {"type": "MostAlocated", "weight": 2}}),
        f'{ARGS0}.resources["nvidia.com/gpu"].type',
        "fitplus.strategy",
        "scores this resource 0 on every node and still counts its weight 2",
    ),
    "RequestedToCapacityRatio": (
        fit_plus({"cpu": {"type": "RequestedToCapacityRatio", "weight": 1}}),
        f"{ARGS0}.resources.cpu.type",
        "fitplus.strategy",
        "RequestedToCapacityRatio is a NodeResourcesFit strategy the plugin lacks",
    ),
    "no type": (
        fit_plus({"cpu": {"weight": 1}}),
        f"{ARGS0}.resources.cpu.type",
        "fitplus.strategy",
        "scores this resource 0 on every node and still counts its weight 1",
    ),
    "negative weight": (
        fit_plus({"nvidia.com/gpu": GOOD_GPU, "cpu": {"type": "LeastAllocated", "weight": -1}}),
        f"{ARGS0}.resources.cpu.weight",
        "fitplus.weight-negative",
        'fails that pod\'s scheduling cycle ("returns an invalid score")',
    ),
    "invalid name in NodeResourcesFitPlus": (
        fit_plus({"nvidia.com/gpu/extra": GOOD_GPU}),
        f'{ARGS0}.resources["nvidia.com/gpu/extra"]',
        "fitplus.resource-name",
        "no pod can request such a resource, so NodeResourcesFitPlus never scores it",
    ),
    "invalid name in ScarceResourceAvoidance": (
        scarce(["nvidia.com/gpu", "nvidia.com/gpu/extra"]),
        f"{ARGS0}.resources[1]",
        "scarce.resource-name",
        "no node has such a resource, so ScarceResourceAvoidance never counts it as scarce",
    ),
    "invalid name in LimitAware": (
        limit_aware({"cpu": 1, "gpu": 1}),
        f"{ARGS0}.scoringResourceWeights.gpu",
        "resources.valid-name",
        "koord-scheduler v1.8.0 carrying LimitAware starts with it, but no node has such a resource",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_a_value_koord_scheduler_would_misread_is_one_error_saying_what_it_would_do(case: str) -> None:
    document, path, rule, effect = ERRORS[case]
    report = check(document, scheduler=KOORD)
    assert [(f.path, f.rule) for f in report.errors] == [(path, rule)], [str(f) for f in report.findings]
    message = report.errors[0].message
    assert effect in message
    assert "starts with it, but" in message or "starts without it, but" in message


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_the_cli_exits_1_on_each(case: str, tmp_path, capsys) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(ERRORS[case][0]))
    assert validate_main(["--scheduler", KOORD, str(path)]) == 1
    assert ERRORS[case][1] in capsys.readouterr().out
    assert validate_main([str(path)]) == 1  # auto detects koord-scheduler from the plugin
    capsys.readouterr()


def test_weight_0_stays_a_warning_the_resource_leaves_the_score() -> None:
    report = check(
        fit_plus({"nvidia.com/gpu": GOOD_GPU, "cpu": {"type": "LeastAllocated", "weight": 0}}), KOORD
    )
    assert report.ok
    assert [(f.path, f.rule) for f in report.warnings] == [
        (f"{ARGS0}.resources.cpu.weight", "fitplus.weight-zero")
    ]
    assert "leaves this resource out of the score" in report.warnings[0].message


def test_a_single_negatively_weighted_resource_is_still_an_error() -> None:
    """Alone it scores within 0..100 (w*s/w), but the next resource listed makes the average leave it:
    the domain is the weight's, not the pod's."""
    report = check(fit_plus({"cpu": {"type": "LeastAllocated", "weight": -3}}), KOORD)
    assert [f.rule for f in report.errors] == ["fitplus.weight-negative"]


def test_large_weights_and_every_valid_name_form_pass_strict() -> None:
    resources = {
        "cpu": {"type": "LeastAllocated", "weight": 500},
        "memory": {"type": "MostAllocated", "weight": 1},
        "ephemeral-storage": {"type": "LeastAllocated", "weight": 1},
        "hugepages-2Mi": {"type": "MostAllocated", "weight": 1},
        "example.com/foo_bar.baz": {"type": "MostAllocated", "weight": 1},
    }
    assert check(fit_plus(resources), KOORD).passes(strict=True)
    assert check(scarce(["nvidia.com/gpu", "hugepages-1Gi"]), KOORD).passes(strict=True)


def test_args_of_a_plugin_the_profile_does_not_enable_fold_into_one_warning() -> None:
    """koord-scheduler builds (and so uses) only enabled plugins: the misread value is unused there."""
    report = check(fit_plus({"cpu": {"type": "MostAlocated", "weight": 1}}, enabled=False), KOORD)
    assert report.ok and [f.rule for f in report.warnings] == [
        "plugin-config.not-enabled",
        "args.unused-plugin",
    ]
    assert "fitplus.strategy" not in json.dumps(report.to_dict())
    assert '"MostAlocated"' in report.warnings[1].message


def test_every_error_of_one_entry_is_reported() -> None:
    report = check(fit_plus({"nvidia.com/gpu/extra": {"type": "MostAlocated", "weight": -2}}), KOORD)
    assert sorted(f.rule for f in report.errors) == [
        "fitplus.resource-name",
        "fitplus.strategy",
        "fitplus.weight-negative",
    ]


# ------------------------------------------------------------------------------- the design documents
DESIGN_FRAGMENT = FIXTURES / "schedcfg-v1-profiles-fragment-nodefitplus-scarceavoid.koordinator-website.yaml"


def design_example(kind: str = "NodeResourcesFitPlusArgs") -> dict[str, Any]:
    """The user manual's profile (fenced block #3, a fragment) as a whole configuration."""
    document = config(**yaml.safe_load(DESIGN_FRAGMENT.read_text(encoding="utf-8")))
    document["profiles"][0]["pluginConfig"][0]["args"]["kind"] = kind
    return document


def test_the_corrected_design_example_is_valid_and_strict_clean() -> None:
    assert check(design_example(), KOORD).passes(strict=True)
    assert check(design_example()).passes(strict=True)  # auto detects koord-scheduler


def test_the_design_documents_kind_resource_types_args_stays_an_error() -> None:
    report = check(design_example("ResourceTypesArgs"), KOORD)
    assert [f.path for f in report.errors] == [f"{ARGS0}.kind"]
    assert '"NodeResourcesFitPlusArgs"' in report.errors[0].message


# -------------------------------------------------------------------------------------- the schemas
KOORD_SCHEMAS = "args/koordinator"
FIT_PLUS_SCHEMA = f"{KOORD_SCHEMAS}/NodeResourcesFitPlusArgs.schema.json"


def editor(relative: str) -> Draft202012Validator:
    """What an editor applies: the schema as plain draft 2020-12, x- keywords ignored."""
    return Draft202012Validator(schemas.load_schema(relative))


SCHEMA_CASES = [
    (FIT_PLUS_SCHEMA, {"resources": {"cpu": {"type": "MostAlocated", "weight": 1}}}, False),
    (FIT_PLUS_SCHEMA, {"resources": {"cpu": {"type": "RequestedToCapacityRatio", "weight": 1}}}, False),
    (FIT_PLUS_SCHEMA, {"resources": {"cpu": {"weight": 1}}}, False),
    (FIT_PLUS_SCHEMA, {"resources": {"cpu": {"type": "MostAllocated", "weight": -1}}}, False),
    (FIT_PLUS_SCHEMA, {"resources": {"gpu": {"type": "MostAllocated", "weight": 1}}}, False),
    (FIT_PLUS_SCHEMA, {"resources": {"cpu": {"type": "MostAllocated", "weight": 0}}}, True),
    (FIT_PLUS_SCHEMA, {"resources": {"nvidia.com/gpu": {"type": "MostAllocated", "weight": 500}}}, True),
    (
        f"{KOORD_SCHEMAS}/ScarceResourceAvoidanceArgs.schema.json",
        {"resources": ["nvidia.com/gpu/extra"]},
        False,
    ),
    (f"{KOORD_SCHEMAS}/ScarceResourceAvoidanceArgs.schema.json", {"resources": ["nvidia.com/gpu"]}, True),
    (f"{KOORD_SCHEMAS}/LimitAwareArgs.schema.json", {"scoringResourceWeights": {"gpu": 1}}, False),
    (f"{KOORD_SCHEMAS}/LimitAwareArgs.schema.json", {"defaultLimitToAllocatableRatio": {"gpu": 150}}, False),
    (
        "args/NodeResourcesFitPlusArgs.schema.json",
        {"resources": {"a b": {"type": "MostAllocated", "weight": 1}}},
        False,
    ),
    (
        "args/ResourceTypesArgs.schema.json",
        {"resources": {"x/": {"type": "MostAllocated", "weight": 1}}},
        False,
    ),
    ("args/ScarceResourceAvoidanceArgs.schema.json", {"resources": ["gpu"]}, False),
    ("args/LimitAwareArgs.schema.json", {"scoringResourceWeights": {"nvidia.com/gpu/x": 1}}, False),
]


@pytest.mark.parametrize(("schema", "args", "valid"), SCHEMA_CASES)
def test_an_editor_flags_what_the_cli_flags(schema: str, args: dict[str, Any], valid: bool) -> None:
    assert editor(schema).is_valid(args) is valid
    kind = schemas.load_schema(schema)["title"].split()[0]
    plugin = {
        "NodeResourcesFitPlusArgs": "NodeResourcesFitPlus",
        "ResourceTypesArgs": "NodeResourcesFitPlus",
    }.get(kind, kind.removesuffix("Args"))
    scheduler = KOORD if schema.startswith(KOORD_SCHEMAS) else "kube-scheduler"
    report = check(profile(plugin, {"kind": kind, **args}), scheduler)
    assert report.ok is valid, [str(f) for f in report.findings]
    # the marked schema keyword is left to its rule: one finding per value, not two
    assert len({f.path for f in report.errors}) == len(report.errors)


def rule_marks(node: Any) -> list[str]:
    """Every rule a schema names in its x-limitguard-rule marks."""
    if isinstance(node, dict):
        found = list(node.get(schemas.RULE_KEYWORD, {}).values())
        return found + [rule for value in node.values() for rule in rule_marks(value)]
    if isinstance(node, list):
        return [rule for value in node for rule in rule_marks(value)]
    return []


def test_marked_schema_keywords_name_rules_the_validator_has() -> None:
    marked = {
        rule
        for path in (REPO / "webhook" / "limitguard" / "schemas").rglob("*.json")
        for rule in rule_marks(json.loads(path.read_text()))
    }
    assert marked == {
        "fitplus.strategy",
        "fitplus.weight-negative",
        "fitplus.resource-name",
        "scarce.resource-name",
        "resources.valid-name",
    }
    emitted = {f.rule for case in ERRORS.values() for f in check(case[0], KOORD).errors}
    emitted |= {
        f.rule
        for f in check(
            profile("NodeResourcesFitPlus", {"resources": {"x y": GOOD_GPU}}), "kube-scheduler"
        ).errors
    }
    assert marked <= emitted


def name_patterns(node: Any) -> list[str]:
    """Every pattern a schema leaves to a resource-name rule."""
    if isinstance(node, dict):
        rule = node.get(schemas.RULE_KEYWORD, {}).get("pattern", "")
        found = [node["pattern"]] if rule.endswith(("resource-name", "valid-name")) else []
        return found + [p for value in node.values() for p in name_patterns(value)]
    if isinstance(node, list):
        return [p for value in node for p in name_patterns(value)]
    return []


def test_the_schemas_resource_name_pattern_is_the_validators_rule() -> None:
    """RESOURCE_NAME_PATTERN is is_valid_resource_name as a regex (tests/unit/schedcfg/test_helpers.py)."""
    found = [
        p
        for path in (REPO / "webhook" / "limitguard" / "schemas").rglob("*.json")
        for p in name_patterns(json.loads(path.read_text()))
    ]
    # limitguard's NodeResourcesFitPlusArgs, ResourceTypesArgs, ScarceResourceAvoidanceArgs, LimitAwareArgs
    # (two maps), koord-scheduler's NodeResourcesFitPlusArgs, ScarceResourceAvoidanceArgs, LimitAwareArgs (two)
    assert found == [RESOURCE_NAME_PATTERN] * 9


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "MostAlocated", "weight": 1},
        {"weight": 1},
        {"type": "MostAllocated", "weight": 0},
        {"type": "MostAllocated"},
        {"type": "MostAllocated", "weight": -2},
        {"type": "MostAllocated", "weight": 101},
    ],
)
def test_limitguards_extender_view_refuses_what_its_scorer_cannot_use(spec: dict[str, Any]) -> None:
    """Under kube-scheduler these args are limitguard's extender's: strategy and weights 1..100 (schema)."""
    report = check(fit_plus({"cpu": spec}), "kube-scheduler")
    assert report.errors and all(f.rule.startswith("schema.") for f in report.errors)
