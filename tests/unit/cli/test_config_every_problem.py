"""Every problem of a configuration file in one run, each `path: problem`, as kube-scheduler's
validation aggregates its field.ErrorList: the JSON Schema's, the cross-field rules, the node pools,
the extender's scorers and their args. A rule that needs a value the schema refused skips only what
depends on it, and a value is reported once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from limitguard.cli.configfile import config_errors, parse_config
from limitguard.cli.main import main
from limitguard.core.config import ConfigError
from tests.support import HANG_GUARD_SECONDS, REPO

HEAD = "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
DEMO_CLUSTER = str(REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml")
POD = str(REPO / "tests" / "integration" / "cli" / "web.yaml")

# Problems in four sections, each kind found by a different stage: the schema (limitAware.enforcement,
# placementHints.weight), a pool rule (a duplicate name), a cross-field rule (replicas) and the
# extender's args (the scheduler-config validator's rules) and scorer list (a duplicate).
FOUR_SECTIONS = (
    HEAD
    + """\
limitAware:
  enforcement: Dent
  nodePools:
  - {name: gpu, nodeSelector: {matchLabels: {pool: gpu}}, limitToAllocatableRatio: {cpu: 150}}
  - {name: gpu, nodeSelector: {}, limitToAllocatableRatio: {cpu: 120}}
placementHints: {weight: 1000}
replicas: {leaseDurationSeconds: 5, renewDeadlineSeconds: 10}
extender:
  scorers:
  - {name: LimitAware, weight: 2}
  - {name: LimitAware, weight: 3}
  - name: NodeResourcesFitPlus
    args: {kind: NodeResourcesFitPlusArgs, resources: {cpu: {type: MostAlocated, weight: 1}}}
"""
)
EXPECTED = [
    'limitAware.enforcement: Unsupported value: "Dent": supported values: "Deny", "Warn", "DryRun"',
    "placementHints.weight: Invalid value: 1000: not in valid range [1, 100]",
    "limitAware.nodePools[1].name: Duplicate value: 'gpu' (also limitAware.nodePools[0])",
    "replicas.leaseDurationSeconds: must be greater than renewDeadlineSeconds",
    "extender.scorers[1].name: Duplicate value: 'LimitAware' (also extender.scorers[0])",
    'extender.scorers[2].args.resources.cpu.type: Unsupported value: "MostAlocated": supported values: '
    '"LeastAllocated", "MostAllocated"',
]


def problems(document: str) -> list[str]:
    return config_errors(yaml.safe_load(document)).texts()


def test_problems_of_four_sections_come_in_one_run() -> None:
    assert problems(FOUR_SECTIONS) == EXPECTED


def test_a_valid_file_has_no_problem_and_loads() -> None:
    document = HEAD + "replicas: {leaseDurationSeconds: 30, renewDeadlineSeconds: 20}\n"
    assert problems(document) == []
    assert parse_config(yaml.safe_load(document)).replicas.lease_duration_seconds == 30


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [
        # the schema refuses the lease: the rule that compares it is skipped, not judged on a default
        (
            "{leaseDurationSeconds: abc, renewDeadlineSeconds: 20}",
            ['replicas.leaseDurationSeconds: Invalid value: "abc": must be of type integer, not string'],
        ),
        # the renew deadline is refused: neither rule over it runs, the rest of the file is still read
        (
            "{leaseDurationSeconds: 5, renewDeadlineSeconds: x}",
            ['replicas.renewDeadlineSeconds: Invalid value: "x": must be of type number, not string'],
        ),
        # both rules fail on valid values: both are reported
        (
            "{leaseDurationSeconds: 5, renewDeadlineSeconds: 10, retryPeriodSeconds: 9}",
            [
                "replicas.leaseDurationSeconds: must be greater than renewDeadlineSeconds",
                "replicas.renewDeadlineSeconds: must be greater than 1.2 x retryPeriodSeconds",
            ],
        ),
    ],
)
def test_a_rule_skips_only_what_depends_on_a_refused_value(replicas: str, expected: list[str]) -> None:
    assert problems(HEAD + f"replicas: {replicas}\n") == expected


def test_a_value_the_schema_and_a_section_rule_both_refuse_is_reported_once() -> None:
    found = problems(
        HEAD
        + "limitAware:\n  nodePools:\n"
        + "  - {name: GPU, nodeSelector: {}, limitToAllocatableRatio: {cpu: 150}}\n"
        + "  - {nodeSelector: {}, limitToAllocatableRatio: {cpu: 150}}\n"
    )
    assert [problem.split(":")[0] for problem in found] == [
        "limitAware.nodePools[0].name",
        "limitAware.nodePools[1].name",
    ]
    assert found[1] == "limitAware.nodePools[1].name: Required value"


def test_a_scorer_with_a_bad_weight_still_has_its_args_checked_and_its_name_counted() -> None:
    found = problems(
        HEAD
        + "extender:\n  scorers:\n"
        + "  - {name: NodeResourcesFitPlus, weight: 0, args: {kind: NodeResourcesFitPlusArgs,"
        + " resources: {cpu: {type: X, weight: 1}}}}\n"
        + "  - {name: NodeResourcesFitPlus}\n"
    )
    assert found == [
        "extender.scorers[0].weight: Invalid value: 0: not in valid range [1, 100]",
        'extender.scorers[0].args.resources.cpu.type: Unsupported value: "X": supported values: '
        '"LeastAllocated", "MostAllocated"',
        "extender.scorers[1].name: Duplicate value: 'NodeResourcesFitPlus' (also extender.scorers[0])",
    ]


def test_a_bad_default_limit_is_not_compared_with_its_request() -> None:
    found = problems(HEAD + "bestEffortDefaults: {limits: {cpu: abc}, requests: {cpu: '1'}}\n")
    assert [problem.split(":")[0] for problem in found] == ["bestEffortDefaults.limits.cpu"]


@pytest.mark.parametrize(
    "section",
    [
        "limitAware: 5",
        "limitAware: {daemonSetOwnerKinds: [{group: x}]}",
        "limitAware: {namespaceEnforcement: {a: Nope}}",
        "limitAware: {nodePools: 5}",
        "extender: x",
        "extender: {scorers: [{name: LimitAware, args: 5}]}",
        "placementHints: {mode: x, weight: y, schedulerNames: [1]}",
        "schedulerConfigValidation: {kubernetesVersion: '1.20', featureGates: {X: y}}",
    ],
)
def test_a_refused_value_never_breaks_the_later_stages(section: str) -> None:
    """Each stage reads around what the schema refused: one problem per refused value, no crash."""
    found = problems(HEAD + section + "\nreplicas: {leaseDurationSeconds: 5}\n")
    assert found[-1] == "replicas.leaseDurationSeconds: must be greater than renewDeadlineSeconds"
    assert len(found) >= 2
    with pytest.raises(ConfigError):
        parse_config(yaml.safe_load(HEAD + section))


def test_a_document_that_is_not_an_object_is_one_problem() -> None:
    assert problems("- a\n") == ['<root>: Invalid value: ["a"]: must be of type object, not array']


def test_an_integer_past_4300_digits_is_a_yaml_problem_not_a_crash(tmp_path: Path, capsys) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(HEAD + "replicas: {leaseDurationSeconds: " + "9" * 5000 + "}\n")
    assert main(["audit", "--cluster", DEMO_CLUSTER, "--config", str(path)]) == 2
    assert "not valid YAML" in capsys.readouterr().err
    assert main(["validate", str(path)]) == 1
    assert "YAML input rejected: a value cannot be read" in capsys.readouterr().out


# -- every command that reads --config, and `limitguard validate` on the file itself ---------------
@pytest.fixture
def four_sections(tmp_path: Path) -> Path:
    path = tmp_path / "limitguard.yaml"
    path.write_text(FOUR_SECTIONS)
    return path


def reported(output: str) -> list[str]:
    """The problems a command printed, as `path: problem` (validate adds `file:line:column: error: `)."""
    lines = [line.strip() for line in output.splitlines()]
    return [line.split(": error: ", 1)[-1] for line in lines if any(line.endswith(e) for e in EXPECTED)]


@pytest.mark.parametrize("command", ["explain", "audit"])
def test_explain_and_audit_report_every_problem_in_one_run(
    command: str, four_sections: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "--cluster", DEMO_CLUSTER, "--config", str(four_sections)]
    assert main(argv + ([POD] if command == "explain" else [])) == 2
    assert reported(capsys.readouterr().err) == EXPECTED


def test_validate_reports_every_problem_of_a_limitguard_configuration(
    four_sections: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(four_sections)]) == 1
    output = capsys.readouterr().out
    assert sorted(reported(output)) == sorted(EXPECTED)  # in the file's order, each with its line
    assert f"{four_sections}:4:3: error: limitAware.enforcement" in output
    assert "invalid (6 errors, 0 warnings)" in output


def test_validate_passes_the_demo_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(REPO / "webhook" / "limitguard" / "demo" / "config.yaml")]) == 0
    assert "valid (0 errors, 0 warnings)" in capsys.readouterr().out


def test_serve_reports_every_problem_in_one_run(four_sections: Path, tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            *(sys.executable, "-m", "limitguard", "serve", "--config", str(four_sections)),
            *("--cluster", DEMO_CLUSTER, "--cert-dir", str(tmp_path / "certs"), "--port", "0"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )
    assert completed.returncode == 2
    assert reported(completed.stderr) == EXPECTED
