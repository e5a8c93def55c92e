"""config.schedulerConfigValidation.scheduler reaches the server's configuration (real helm, issue 28)."""

from __future__ import annotations

import pytest
import yaml

from tests.e2e.chart.conftest import FULLNAME, Helm, one
from tests.e2e.chart.rendered import Render, _config

SETTING = "config.schedulerConfigValidation.scheduler"


def _server_yaml(objects: list) -> dict:
    return yaml.safe_load(one(objects, "ConfigMap", f"{FULLNAME}-config")["data"]["config.yaml"])


def test_default_is_detection(render: Render) -> None:
    objects = render()
    assert "schedulerConfigValidation" not in _server_yaml(objects)
    assert _config(objects).scheduler_name == "auto"


@pytest.mark.parametrize("scheduler", ["auto", "kube-scheduler", "koord-scheduler", "scheduler-plugins"])
def test_each_scheduler_reaches_the_server(render: Render, scheduler: str) -> None:
    objects = render("default", f"{SETTING}={scheduler}")
    assert _server_yaml(objects)["schedulerConfigValidation"] == {"scheduler": scheduler}
    assert _config(objects).scheduler_name == scheduler


@pytest.mark.parametrize("value", ["koord", "default-scheduler", "Auto"])
def test_the_values_schema_refuses_another_scheduler(helm: Helm, value: str) -> None:
    result = helm.template(f"{SETTING}={value}", check=False)
    assert result.returncode != 0, f"--set {SETTING}={value} was accepted"
    assert "schema" in result.stderr.lower() and "scheduler" in result.stderr, result.stderr
