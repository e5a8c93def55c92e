"""configmap_verdict: the webhook's view of ConfigMap CREATE/UPDATE."""

from __future__ import annotations

import json
from typing import Any

import pytest

from limitguard.schedcfg import configmap_verdict, documents, validator
from tests.unit.schedcfg.helpers import FIXTURES, config

GOOD = json.dumps(config(profiles=[{"schedulerName": "s"}]))
BAD = json.dumps(
    config(
        profiles=[
            {
                "schedulerName": "s",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFitPlus",
                        "args": {"resources": {"nvidia.com/gpu": {"type": "MostAlocated", "weight": 2}}},
                    }
                ],
            }
        ]
    )
)


def configmap(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "ns"},
        "data": data,
    }


def test_configmaps_without_a_configuration_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(_text: str) -> None:
        raise AssertionError("a value without KubeSchedulerConfiguration must not be parsed")

    monkeypatch.setattr(validator, "load_documents", fail)
    monkeypatch.setattr(documents, "load_documents", fail)
    assert configmap_verdict(configmap({"a": "x: [unclosed", "b": "plain"})) is None
    assert configmap_verdict(configmap({})) is None
    assert configmap_verdict({"kind": "ConfigMap"}) is None


@pytest.mark.parametrize(
    "name",
    [
        "admissionrequest-configmap-create-openshift-oc.kyverno-validate-manifest.json",
        "admissionrequest-configmap-update-handedited.kyverno.json",
    ],
)
def test_captured_configmap_requests_are_untouched(name: str) -> None:
    request = json.loads((FIXTURES / name).read_text())
    assert configmap_verdict(request["object"]) is None


def test_invalid_configuration_paths_are_prefixed_with_the_data_key() -> None:
    # limitguard's own view of NodeResourcesFitPlusArgs (its extender's); koord-scheduler only warns
    report = configmap_verdict(
        configmap({"scheduler-config.yaml": BAD, "other": "hello"}), scheduler="kube-scheduler"
    )
    assert report is not None and not report.ok
    assert [str(f) for f in report.errors] == [
        'data[scheduler-config.yaml].profiles[0].pluginConfig[0].args.resources["nvidia.com/gpu"].type: '
        'Unsupported value: "MostAlocated": supported values: "LeastAllocated", "MostAllocated"'
    ]
    assert report.source == "configmap/ns/cm"


def test_valid_configuration_is_ok_and_keeps_warnings() -> None:
    zero = json.dumps(config(leaderElection={"retryPeriod": "0s"}))
    report = configmap_verdict(configmap({"a": GOOD, "b": zero}))
    assert report is not None and report.ok
    assert [f.path for f in report.warnings] == ["data[b].leaderElection.retryPeriod"]


def test_unserved_api_version_is_denied_for_the_chosen_release() -> None:
    old = json.dumps(config("v1beta3", profiles=[{"schedulerName": "s"}]))
    report = configmap_verdict(configmap({"b": old}))
    assert report is not None and [f.path for f in report.errors] == ["data[b].apiVersion"]


def test_yaml_error_in_a_value_denies_with_the_position_in_the_value() -> None:
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- a: [\n"
    report = configmap_verdict(configmap({"cfg": text}))
    assert report is not None
    (error,) = report.errors
    assert error.path == "data[cfg]" and "of the value" in error.message and "line" in error.message


def test_value_that_only_mentions_the_kind_is_allowed_with_a_note() -> None:
    report = configmap_verdict(
        configmap({"readme": "# how to write a KubeSchedulerConfiguration\nkey: value\n"})
    )
    assert report is not None and report.ok and [f.rule for f in report.infos] == ["input.skipped"]
