"""config.schedulerConfigValidation.scheduler (NAME or NAME@VERSION) reaches the server's configuration (real
helm)."""

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


@pytest.mark.parametrize(
    "scheduler",
    [
        "auto",
        "kube-scheduler",
        "koord-scheduler",
        "scheduler-plugins",
        "koord-scheduler@v1.7.0",
        "scheduler-plugins@main",
        "koord-scheduler@v1.9.0",  # no table yet: the server applies the newest release and warns
    ],
)
def test_each_scheduler_reaches_the_server(render: Render, scheduler: str) -> None:
    objects = render("default", f"{SETTING}={scheduler}")
    assert _server_yaml(objects)["schedulerConfigValidation"] == {"scheduler": scheduler}
    assert _config(objects).scheduler_name == scheduler


@pytest.mark.parametrize("value", ["koord", "default-scheduler", "Auto", "auto@v1", "koord-scheduler@"])
def test_the_values_schema_refuses_another_scheduler(helm: Helm, value: str) -> None:
    result = helm.template(f"{SETTING}={value}", check=False)
    assert result.returncode != 0, f"--set {SETTING}={value} was accepted"
    assert "schema" in result.stderr.lower() and "scheduler" in result.stderr, result.stderr
