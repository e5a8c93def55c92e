"""The chart's servingLimits values reach `limitguard serve`'s connection and body limits (real helm)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
import yaml

from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import serving_limits
from limitguard.http.limits import ServingLimits
from tests.e2e.chart.conftest import CHART, NAMESPACE, RELEASE, Helm
from tests.e2e.chart.rendered import Render, server_container


def limits_of(render: Render, *settings: str) -> ServingLimits:
    return parsed(server_container(render("default", *settings))["args"])


def parsed(args: list[str]) -> ServingLimits:
    """The limits the rendered server container's arguments give, parsed by serve's own parser."""
    assert args[0] == "serve"
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return serving_limits(parser.parse_args(args[1:]))


def test_the_default_values_are_the_servers_defaults(render: Render) -> None:
    assert limits_of(render) == ServingLimits()


def test_each_value_reaches_its_flag(render: Render) -> None:
    limits = limits_of(
        render,
        "servingLimits.headerTimeoutSeconds=3",
        "servingLimits.idleTimeoutSeconds=300",
        "servingLimits.maxConnectionsPerPeer=64",
        "servingLimits.maxConnections=512",
        "servingLimits.maxBodyBytesPerPeer=33554432",
        "servingLimits.maxBodyBytesInFlight=268435456",  # large integers stay integers, not 2.68e+08
    )
    assert limits == ServingLimits(3.0, 300.0, 64, 512, 33554432, 268435456)


def test_fractional_seconds_reach_the_server(helm: Helm) -> None:
    """A values file's 2.5 is a number (`--set` would make it a string, which the schema refuses)."""
    output = helm.run(
        *("template", RELEASE, str(CHART), "--namespace", NAMESPACE),
        *("--set-json", "servingLimits.headerTimeoutSeconds=2.5"),
    ).stdout
    objects: list[dict[str, Any]] = [doc for doc in yaml.safe_load_all(output) if doc]
    assert parsed(server_container(objects)["args"]).header_timeout_seconds == 2.5


@pytest.mark.parametrize(
    "setting",
    [
        "servingLimits.headerTimeoutSeconds=0",
        "servingLimits.idleTimeoutSeconds=-1",
        "servingLimits.maxConnections=0",
        "servingLimits.maxConnectionsPerPeer=many",
        "servingLimits.maxBodyBytesInFlight=1024",
        "servingLimits.maxBodyBytesPerPeers=1",
    ],
)
def test_the_values_schema_refuses_limits_that_would_lock_everyone_out(helm: Helm, setting: str) -> None:
    result = helm.template(setting, check=False)
    assert result.returncode != 0, f"--set {setting} was accepted"
    assert "schema" in result.stderr.lower() and "servingLimits" in result.stderr, result.stderr
