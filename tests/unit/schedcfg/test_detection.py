"""Which scheduler reads a configuration: detected from plugins only one project registers, named with
--scheduler, the webhook's configuration or a ConfigMap's limitguard.io/scheduler annotation.

Coscheduling is registered by koord-scheduler (koordinator-sh/koordinator v1.8.0 cmd/koord-scheduler/main.go)
and by the scheduler-plugins scheduler (kubernetes-sigs/scheduler-plugins v0.34.7 cmd/scheduler/main.go):
it decides nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from limitguard.admission.configmaps import UNDETERMINED, configmap_check
from limitguard.cli.configfile import parse_config
from limitguard.cli.validate import main as validate_main
from limitguard.core.config import ConfigError
from limitguard.schedcfg import configmap_verdict
from limitguard.schedcfg.schedulers import detect
from limitguard.schedcfg.tables.releases import Release
from tests.unit.schedcfg.helpers import config


def enabling(*names: str, point: str = "score") -> dict[str, Any]:
    return config(
        profiles=[{"schedulerName": "s", "plugins": {point: {"enabled": [{"name": n} for n in names]}}}]
    )


@pytest.mark.parametrize(
    ("names", "scheduler"),
    [
        ((), "kube-scheduler"),
        (("NodeResourcesFit", "ImageLocality"), "kube-scheduler"),
        (("EBSLimits",), "kube-scheduler"),  # removed in 1.32: still kube-scheduler's name
        (("LoadAwareScheduling",), "koord-scheduler"),
        (("Coscheduling", "Reservation"), "koord-scheduler"),
        (("NodeResourcesFitPlus",), "koord-scheduler"),
        (("TargetLoadPacking",), "scheduler-plugins"),
        (("Coscheduling", "NodeResourcesAllocatable"), "scheduler-plugins"),
    ],
)
def test_plugins_only_one_project_registers_decide(names: tuple[str, ...], scheduler: str) -> None:
    detection = detect(enabling(*names), Release())
    assert (detection.scheduler.name, detection.certain) == (scheduler, True)


def test_coscheduling_alone_decides_nothing_and_names_the_flag() -> None:
    detection = detect(enabling("Coscheduling"), Release())
    assert detection.certain is False and detection.scheduler.name == "kube-scheduler"
    assert "--scheduler" in detection.reason and '"Coscheduling"' in detection.reason


def test_plugins_of_two_projects_are_not_certain() -> None:
    detection = detect(enabling("LoadAwareScheduling", "Reservation", "TargetLoadPacking"), Release())
    assert detection.certain is False and detection.scheduler.name == "koord-scheduler"
    assert "--scheduler" in detection.reason


def test_a_plugin_no_known_scheduler_registers_is_not_certain() -> None:
    detection = detect(enabling("MyCompanyScorer"), Release())
    assert detection.certain is False and '"MyCompanyScorer"' in detection.reason


def test_plugin_config_names_count_too() -> None:
    doc = config(profiles=[{"schedulerName": "s", "pluginConfig": [{"name": "ElasticQuota", "args": {}}]}])
    assert detect(doc, Release()).scheduler.name == "koord-scheduler"


# -------------------------------------------------------------------------------------------------- CLI
def run_cli(tmp_path, capsys, document: dict[str, Any], *flags: str) -> tuple[int, str]:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(document))
    code = validate_main([*flags, str(path)])
    return code, capsys.readouterr().out


def test_cli_prints_the_scheduler_and_the_reason(tmp_path, capsys) -> None:
    code, out = run_cli(tmp_path, capsys, enabling("LoadAwareScheduling"))
    assert code == 0
    assert 'judged for koord-scheduler v1.8.0 (Kubernetes 1.35): names "LoadAwareScheduling"' in out


def test_cli_says_when_it_is_not_certain(tmp_path, capsys) -> None:
    code, out = run_cli(tmp_path, capsys, enabling("Coscheduling"))
    assert code == 0 and "(not certain)" in out and "--scheduler" in out


def test_cli_scheduler_flag_wins_over_detection(tmp_path, capsys) -> None:
    document = enabling("Coscheduling", point="multiPoint")
    code, out = run_cli(tmp_path, capsys, document, "--scheduler", "scheduler-plugins", "-o", "json")
    result = json.loads(out)
    assert code == 1 and result["scheduler"] == "scheduler-plugins"
    reader = result["files"][0]["schedulers"][0]
    assert reader["scheduler"] == "scheduler-plugins" and reader["kubernetesVersion"] == "1.34"
    assert (reader["reason"], reader["certain"]) == ("named by --scheduler", True)
    assert [e["rule"] for e in result["files"][0]["errors"]] == ["queue-sort.exactly-one"]
    code, _ = run_cli(tmp_path, capsys, document, "--scheduler", "koord-scheduler", "--strict")
    assert code == 0


def test_cli_refuses_an_unknown_scheduler(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tmp_path, capsys, enabling(), "--scheduler", "volcano")
    assert exit_info.value.code == 2


# ------------------------------------------------------------------------------------ ConfigMap webhook
def configmap(document: dict[str, Any], annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "cm", "namespace": "ns"}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {"c.yaml": json.dumps(document)},
    }


QUEUE_SORT_TWICE = enabling("Coscheduling", point="multiPoint")


def test_annotation_names_the_scheduler() -> None:
    sigs = configmap_verdict(configmap(QUEUE_SORT_TWICE, {"limitguard.io/scheduler": "scheduler-plugins"}))
    koord = configmap_verdict(configmap(QUEUE_SORT_TWICE, {"limitguard.io/scheduler": "koord-scheduler"}))
    assert sigs is not None and [f.rule for f in sigs.errors] == ["queue-sort.exactly-one"]
    assert sigs.readers[0].reason == "named by the limitguard.io/scheduler annotation"
    assert koord is not None and koord.passes(strict=True)
    # the annotation wins over the server's default
    assert configmap_verdict(
        configmap(QUEUE_SORT_TWICE, {"limitguard.io/scheduler": "koord-scheduler"}),
        scheduler="scheduler-plugins",
    ).ok


def test_an_unknown_annotation_value_is_an_error_that_lists_the_choices() -> None:
    report = configmap_verdict(configmap(enabling(), {"limitguard.io/scheduler": "volcano"}))
    assert report is not None and [f.path for f in report.errors] == [
        "metadata.annotations[limitguard.io/scheduler]"
    ]
    assert '"koord-scheduler"' in report.errors[0].message
    response = configmap_check(configmap(enabling(), {"limitguard.io/scheduler": ["koord-scheduler"]}))
    assert response is not None and not response.allowed


def test_webhook_warns_instead_of_denying_when_it_cannot_tell_the_scheduler() -> None:
    response = configmap_check(configmap(QUEUE_SORT_TWICE))
    assert response is not None and response.allowed
    assert UNDETERMINED in response.warnings
    assert any("queue" in w for w in response.warnings)
    assert all(len(w) < 120 for w in response.warnings)
    named = configmap_check(configmap(QUEUE_SORT_TWICE, {"limitguard.io/scheduler": "scheduler-plugins"}))
    assert named is not None and not named.allowed and named.code == 422
    server_default = configmap_check(configmap(QUEUE_SORT_TWICE), scheduler="scheduler-plugins")
    assert server_default is not None and not server_default.allowed
    report = configmap_verdict(configmap(QUEUE_SORT_TWICE), scheduler="scheduler-plugins")
    assert report is not None and "schedulerConfigValidation.scheduler" in report.readers[0].reason


def test_a_huge_plugin_name_is_clipped_in_the_reason() -> None:
    detection = detect(enabling("X" * 100_000), Release())
    assert detection.certain is False and len(detection.reason) < 400


def test_the_webhooks_default_scheduler_comes_from_its_configuration() -> None:
    head = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}
    assert parse_config(head).scheduler_name == "auto"
    chosen = parse_config({**head, "schedulerConfigValidation": {"scheduler": "koord-scheduler"}})
    assert chosen.scheduler_name == "koord-scheduler"
    with pytest.raises(ConfigError, match=r"schedulerConfigValidation\.scheduler"):
        parse_config({**head, "schedulerConfigValidation": {"scheduler": "volcano"}})
