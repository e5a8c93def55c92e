"""Common operator mistakes get a one-line cause and fix instead of surprising behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from limitguard.cli.configfile import parse_config
from limitguard.cli.main import main
from limitguard.core.config import ConfigError
from tests.support import REPO

DEMO_CLUSTER = str(REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml")


# -- ports and sizes ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # 99999 used to be bound as 99999 mod 65536 = 34463 without a word.
        (["--port", "99999"], "argument --port: 99999 is not a port number: use 1-65535"),
        (["--port", "-1"], "argument --port: -1 is not a port number: use 1-65535"),
        (["--port", "https"], "argument --port: 'https' is not a port number: use 1-65535"),
        (["--metrics-port", "65536"], "argument --metrics-port: 65536 is not a port number: use 1-65535"),
        (["--max-body-bytes", "0"], "argument --max-body-bytes: 0 is too small: use 1 or more"),
        (["--log-sample-initial", "-1"], "argument --log-sample-initial: -1 is too small: use 0 or more"),
    ],
)
def test_serve_refuses_a_port_or_size_out_of_range(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--cluster", DEMO_CLUSTER, *argv])
    assert exit_info.value.code == 2
    assert f"limitguard serve: error: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["0", "1", "8443", "65535"])
def test_every_port_in_range_is_accepted(port: str) -> None:
    from limitguard.cli.main import build_parser

    args = build_parser("serve").parse_args(["serve", "--port", port, "--metrics-port", port])
    assert args.port == args.metrics_port == int(port)


# -- a bad ratio in the configuration -------------------------------------------------------------
def config_with_ratio(ratio: object) -> dict[str, object]:
    return {
        "apiVersion": "limitguard.io/v1alpha1",
        "kind": "LimitGuardConfiguration",
        "limitAware": {"defaultLimitToAllocatableRatio": ratio},
    }


FORMS = 'accepted: an integer percent (150) or a percent string ("150%"), e.g. {cpu: 150, memory: "120%"}'
FIELD = "limitAware.defaultLimitToAllocatableRatio"


@pytest.mark.parametrize(
    ("ratio", "problem"),
    [
        (
            {"cpu": "150"},
            f'{FIELD}.cpu: invalid ratio "150": a string needs a % sign ("150%") or use the integer 150; {FORMS}',
        ),
        ({"cpu": 1.5}, f"{FIELD}.cpu: invalid ratio 1.5: must be a whole percent, not a float; {FORMS}"),
        ({"memory": -5}, f"{FIELD}.memory: invalid ratio -5: must not be negative; {FORMS}"),
        ({"cpu": True}, f"{FIELD}.cpu: invalid ratio true: a boolean is not a percent; {FORMS}"),
        (
            {"nvidia.com/gpu": "lots"},
            f'{FIELD}["nvidia.com/gpu"]: invalid ratio "lots": must be a percent: 150 or "150%"; '
            'e.g. {cpu: 150, memory: "120%"}',
        ),
        (150, f"{FIELD}: expected a map of resource name to percent; {FORMS}"),
    ],
)
def test_a_bad_ratio_names_the_field_and_the_accepted_forms(ratio: object, problem: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(config_with_ratio(ratio))
    assert error.value.problems == [problem]


def test_good_ratios_and_other_problems_are_unchanged() -> None:
    assert parse_config(config_with_ratio({"cpu": 150, "memory": "120%"})).limit_aware.default_ratios == {
        "cpu": 150,
        "memory": 120,
    }
    raw = config_with_ratio({"cpu": "150"})
    raw["whileNotReady"] = "Maybe"
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    assert error.value.problems[0].startswith(f"{FIELD}.cpu: invalid ratio")
    assert error.value.problems[1].startswith("whileNotReady: Unsupported value")


def test_the_command_prints_the_field_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
        'limitAware:\n  defaultLimitToAllocatableRatio: {cpu: "150"}\n'
    )
    assert main(["audit", "--cluster", DEMO_CLUSTER, "--config", str(config)]) == 2
    assert f'{FIELD}.cpu: invalid ratio "150": a string needs a % sign' in capsys.readouterr().err
