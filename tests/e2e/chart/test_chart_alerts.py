"""The chart's PrometheusRule: checked by the real promtool (Debian package prometheus), its alerts fired
by `promtool test rules` on synthetic histories, its queries checked against the metrics a server registers."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.chart.conftest import CHART, NAMESPACE, one
from tests.e2e.chart.test_chart_observability import (
    METRICS_SERVICE,
    exposed_metric_names,
    metric_names_in,
)

Render = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="module")
def exposed() -> set[str]:
    return exposed_metric_names()


# -- alerts -------------------------------------------------------------------------------------------
def promtool() -> str:
    found = shutil.which("promtool")
    if not found:
        pytest.skip(
            "promtool is not installed (Debian package prometheus; `make tools` fetches it into .tools/bin when Debian's package lists are available)"
        )
    return found


def rules_file(render: Render, tmp_path: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    rule = one(render("default", "metrics.prometheusRule.enabled=true", *extra), "PrometheusRule")
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rule["spec"]))
    return path, rule


def alerts(rule: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


def test_rules_pass_promtool_check_and_use_metrics_that_exist(
    render: Render, tmp_path: Path, exposed: set[str]
) -> None:
    path, rule = rules_file(render, tmp_path)
    checked = subprocess.run(
        [promtool(), "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 8 rules found" in checked.stdout
    found = alerts(rule)
    assert {
        "LimitGuardNoReadyReplica",
        "LimitGuardNoLeader",
        "LimitGuardFailOpenAnswers",
        "LimitGuardDenialRateSpike",
        "LimitGuardNodesOverRatio",
    } <= set(found)
    for name, alert in found.items():
        assert f'namespace="{NAMESPACE}", job="{METRICS_SERVICE}"' in alert["expr"], name
        assert alert["labels"]["severity"] in {"critical", "warning", "info"}
        assert alert["annotations"]["runbook_url"].endswith("#" + name.lower())
        missing = metric_names_in(alert["expr"]) - exposed
        assert not missing, f"{name} uses metrics no server exposes: {missing}"
    anchors = set(
        re.findall(r'<a id="([a-z]+)"></a>', (CHART.parents[1] / "docs" / "observability.md").read_text())
    )
    assert {name.lower() for name in found} <= anchors  # every runbook link lands on its section


def test_promtool_check_has_teeth(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "groups:\n- name: x\n  rules:\n  - alert: X\n    expr: sum(rate(limitguard_decisions_total[5m]) > \n"
    )
    result = subprocess.run(
        [promtool(), "check", "rules", str(broken)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0


def test_disabled_alerts_are_left_out(render: Render, tmp_path: Path) -> None:
    _, rule = rules_file(
        render,
        tmp_path,
        "metrics.prometheusRule.disabledAlerts={LimitGuardNoLeader,LimitGuardSeveralLeaders}",
    )
    assert "LimitGuardNoLeader" not in alerts(rule) and "LimitGuardNodesOverRatio" in alerts(rule)


def test_alerts_fire_on_the_series_they_are_about(render: Render, tmp_path: Path) -> None:
    """promtool test rules: each alert fires on a synthetic history that shows its problem, and the
    healthy history beside it stays silent."""
    path, rule = rules_file(render, tmp_path, "metrics.prometheusRule.nodesOverRatioFor=30m")
    sel = f'namespace="{NAMESPACE}", job="{METRICS_SERVICE}"'
    defined = alerts(rule)

    def fires(name: str, description: str, **labels: str) -> list[dict[str, Any]]:
        """The one alert expected: its labels, and its annotations with the description as Prometheus renders it."""
        annotations = {**defined[name]["annotations"], "description": description}
        return [
            {
                "exp_labels": {"severity": defined[name]["labels"]["severity"], **labels},
                "exp_annotations": annotations,
            }
        ]

    tests = {
        "rule_files": [str(path)],
        "evaluation_interval": "1m",
        "tests": [
            {  # one node over its ratio for an hour; the leader is present; both replicas ready
                "interval": "1m",
                "input_series": [
                    {"series": f'limitguard_nodes_over_ratio{{{sel}, pod="a"}}', "values": "1x60"},
                    {"series": f'limitguard_leader{{{sel}, pod="a"}}', "values": "1x60"},
                    {"series": f'limitguard_leader{{{sel}, pod="b"}}', "values": "0x60"},
                    {"series": f'limitguard_state_ready{{{sel}, pod="a"}}', "values": "1x60"},
                    {"series": f'limitguard_state_ready{{{sel}, pod="b"}}', "values": "1x60"},
                ],
                "alert_rule_test": [
                    {"eval_time": "20m", "alertname": "LimitGuardNodesOverRatio", "exp_alerts": []},
                    {
                        "eval_time": "40m",
                        "alertname": "LimitGuardNodesOverRatio",
                        "exp_alerts": fires(
                            "LimitGuardNodesOverRatio",
                            "Nodes with summed container limits above allocatable x "
                            "ratio: 1. limitguard_node_limit_ratio shows which, and 'limitguard audit' lists "
                            "their pods.",
                            namespace=NAMESPACE,
                        ),
                    },
                    {"eval_time": "40m", "alertname": "LimitGuardNoLeader", "exp_alerts": []},
                    {"eval_time": "40m", "alertname": "LimitGuardNoReadyReplica", "exp_alerts": []},
                ],
            },
            {  # nobody holds the lease; no replica is ready
                "interval": "1m",
                "input_series": [
                    {"series": f'limitguard_leader{{{sel}, pod="a"}}', "values": "0x30"},
                    {"series": f'limitguard_leader{{{sel}, pod="b"}}', "values": "0x30"},
                    {"series": f'limitguard_state_ready{{{sel}, pod="a"}}', "values": "0x30"},
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "10m",
                        "alertname": "LimitGuardNoLeader",
                        "exp_alerts": fires(
                            "LimitGuardNoLeader", defined["LimitGuardNoLeader"]["annotations"]["description"]
                        ),
                    },
                    {
                        "eval_time": "10m",
                        "alertname": "LimitGuardNoReadyReplica",
                        "exp_alerts": fires(
                            "LimitGuardNoReadyReplica",
                            defined["LimitGuardNoReadyReplica"]["annotations"]["description"],
                        ),
                    },
                ],
            },
            {  # fail-open answers, and denials that are 50 % of 2 answers/s
                "interval": "1m",
                "input_series": [
                    {
                        "series": f'limitguard_fail_open_answers_total{{{sel}, pod="a", webhook="validate", reason="internal-error"}}',
                        "values": "0+5x40",
                    },
                    {
                        "series": f'limitguard_decisions_total{{{sel}, pod="a", webhook="validate", decision="denied", reason="exceeds"}}',
                        "values": "0+60x40",
                    },
                    {
                        "series": f'limitguard_decisions_total{{{sel}, pod="a", webhook="validate", decision="allowed", reason="fits"}}',
                        "values": "0+60x40",
                    },
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "30m",
                        "alertname": "LimitGuardFailOpenAnswers",  # 5 a minute
                        "exp_alerts": fires(
                            "LimitGuardFailOpenAnswers",
                            "limitguard answered 83.33m requests per second "
                            "allowed without a check over the last 10 minutes (see "
                            "limitguard_fail_open_answers_total by reason, and the logs).",
                            namespace=NAMESPACE,
                        ),
                    },
                    {
                        "eval_time": "30m",
                        "alertname": "LimitGuardDenialRateSpike",
                        "exp_alerts": fires(
                            "LimitGuardDenialRateSpike",
                            "More than 25% of admission answers were denials over "
                            "10 minutes (50%). Nodes are filling up to their ratio, or a ratio was lowered: "
                            "run 'limitguard audit'.",
                            namespace=NAMESPACE,
                        ),
                    },
                ],
            },
            {  # a quiet cluster: 1 denial in 10 minutes is not a spike, even at 100 %
                "interval": "1m",
                "input_series": [
                    {
                        "series": f'limitguard_decisions_total{{{sel}, pod="a", webhook="validate", decision="denied", reason="exceeds"}}',
                        "values": "0+0.1x40",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "30m", "alertname": "LimitGuardDenialRateSpike", "exp_alerts": []},
                ],
            },
        ],
    }
    test_file = tmp_path / "rules_test.yaml"
    test_file.write_text(yaml.safe_dump(tests, sort_keys=False))
    result = subprocess.run(
        [promtool(), "test", "rules", str(test_file)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout + result.stderr
