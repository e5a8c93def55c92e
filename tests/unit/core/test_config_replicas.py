"""The `replicas` section: schema, defaults, and client-go's timing rules."""

from __future__ import annotations

import pytest

from limitguard.cli.configfile import parse_config
from limitguard.core.config import ConfigError, NoLeaderPolicy, ReplicasConfig

HEAD = {"apiVersion": "limitguard.io/v1alpha1", "kind": "LimitGuardConfiguration"}


def test_defaults_are_client_gos_and_decide_locally_without_a_leader() -> None:
    replicas = parse_config(dict(HEAD)).replicas
    assert replicas == ReplicasConfig()
    assert replicas.no_leader_policy is NoLeaderPolicy.LOCAL
    assert (
        replicas.lease_duration_seconds,
        replicas.renew_deadline_seconds,
        replicas.retry_period_seconds,
    ) == (
        15,
        10.0,
        2.0,
    )


def test_every_field_loads() -> None:
    replicas = parse_config(
        {
            **HEAD,
            "replicas": {
                "noLeaderPolicy": "Deny",
                "leaseDurationSeconds": 30,
                "renewDeadlineSeconds": 20,
                "retryPeriodSeconds": 4,
                "forwardTimeoutSeconds": 1.5,
            },
        }
    ).replicas
    assert replicas == ReplicasConfig(NoLeaderPolicy.DENY, 30, 20.0, 4.0, 1.5)


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ({"noLeaderPolicy": "Maybe"}, "replicas.noLeaderPolicy"),
        ({"leaseDurationSeconds": 1.5}, "replicas.leaseDurationSeconds"),
        ({"forwardTimeoutSeconds": 0}, "replicas.forwardTimeoutSeconds"),
        ({"leader": True}, 'replicas.leader: Forbidden: unknown field "leader"'),
        (
            {"leaseDurationSeconds": 10, "renewDeadlineSeconds": 10},
            "must be greater than renewDeadlineSeconds",
        ),
        (
            {"renewDeadlineSeconds": 2.4, "retryPeriodSeconds": 2},
            "must be greater than 1.2 x retryPeriodSeconds",
        ),
    ],
)
def test_bad_values_are_rejected(section: dict, problem: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({**HEAD, "replicas": section})
    assert any(problem in line for line in error.value.problems), error.value.problems
